// Which account webhooks an event goes to (src/events/destinations.ts): the device filter, the event filter,
// and the webhook's format carrying the type.
import { describe, expect, it } from 'vitest';
import { matches, type AccountWebhook } from '../../src/events/destinations.js';

const hook = (over: Partial<AccountWebhook> = {}): AccountWebhook => ({
  id: 'wh_1',
  url: 'https://example.com/h',
  devices: null,
  events: null,
  format: 'standard',
  ...over,
});

describe('matches', () => {
  it('takes every device and type with no filters', () => {
    expect(matches(hook(), 1, 'message.sent')).toBe(true);
    expect(matches(hook(), 99, 'device.paired')).toBe(true);
  });

  it('takes only the devices named', () => {
    const h = hook({ devices: new Set([2, 3]) });
    expect(matches(h, 2, 'message.sent')).toBe(true);
    expect(matches(h, 3, 'message.sent')).toBe(true);
    expect(matches(h, 1, 'message.sent')).toBe(false);
  });

  it('takes only the types named', () => {
    const h = hook({ events: new Set(['message.incoming']) });
    expect(matches(h, 1, 'message.incoming')).toBe(true);
    expect(matches(h, 1, 'message.sent')).toBe(false);
  });

  it('leaves out a type its format has no body for', () => {
    expect(matches(hook({ format: 'whatspie_v1' }), 1, 'message.incoming')).toBe(true);
    expect(matches(hook({ format: 'whatspie_v1' }), 1, 'message.sent')).toBe(false);
    expect(matches(hook({ format: 'whatspie_v1', events: new Set(['message.sent']) }), 1, 'message.sent')).toBe(false);
  });
});

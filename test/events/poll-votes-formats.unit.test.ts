// DECISIONS 15, new events: `poll.vote` is carried by the `standard` format only; the `whatspie_*` formats keep
// their own types (a vote for such a device is not recorded at all).
import { describe, expect, it } from 'vitest';
import { carries } from '../../src/events/formats/index.js';
import { EVENT_TYPES } from '../../src/events/types.js';

describe('poll.vote and the webhook formats', () => {
  it('is an event type, carried by standard only', () => {
    expect(EVENT_TYPES).toContain('poll.vote');
    expect(carries('standard', 'poll.vote')).toBe(true);
    expect(carries('whatspie_v1', 'poll.vote')).toBe(false);
    expect(carries('whatspie_v2', 'poll.vote')).toBe(false);
  });
});

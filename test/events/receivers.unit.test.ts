// A receiver's health as the deliverer tracks it: paused after PAUSE_AFTER
// failures in a row, for longer with each failed probe, forgotten on a
// success, and worth a warning once it has failed for an hour (then hourly).
import { describe, expect, it } from 'vitest';
import { PAUSE_AFTER, ReceiverHealth, WARN_AFTER_MS, receiverKey, receiverOf } from '../../src/events/receivers.js';

const T0 = Date.UTC(2026, 0, 1);

describe('ReceiverHealth', () => {
  it('pauses after PAUSE_AFTER failures in a row, along the schedule, and not again for attempts inside the pause', () => {
    const health = new ReceiverHealth([1000, 5000]);
    for (let i = 1; i < PAUSE_AFTER; i++) expect(health.failed('d7', T0).newlyPaused).toBe(false);
    expect(health.pausedUntil('d7')).toBe(0);
    expect(health.failed('d7', T0)).toMatchObject({ newlyPaused: true, pausedUntil: T0 + 1000 });
    expect(health.paused(T0, 10)).toEqual(['d7']);
    expect(health.failed('d7', T0 + 10)).toMatchObject({ newlyPaused: false, pausedUntil: T0 + 1000 });
    // The probe after the pause fails: a longer pause, and the last step repeats.
    expect(health.failed('d7', T0 + 1000)).toMatchObject({ newlyPaused: true, pausedUntil: T0 + 6000 });
    expect(health.failed('d7', T0 + 6000)).toMatchObject({ newlyPaused: true, pausedUntil: T0 + 11_000 });
    expect(health.paused(T0 + 11_000, 10)).toEqual([]);
  });

  it('forgets a receiver that answers again, and resumes a paused one on request', () => {
    const health = new ReceiverHealth([1000]);
    for (let i = 0; i < PAUSE_AFTER; i++) health.failed('d1', T0);
    expect(health.pausedUntil('d1')).toBe(T0 + 1000);
    health.resume('d1');
    expect(health.pausedUntil('d1')).toBe(0);
    expect(health.succeeded('d1')).toBe(true);
    expect(health.succeeded('d1')).toBe(false);
    expect(health.failed('d1', T0).failures).toBe(1);
  });

  it('warns once a receiver has failed for an hour, then once an hour', () => {
    const health = new ReceiverHealth([1000]);
    expect(health.failed('d3', T0).warnFailingSince).toBeNull();
    expect(health.failed('d3', T0 + WARN_AFTER_MS - 1).warnFailingSince).toBeNull();
    expect(health.failed('d3', T0 + WARN_AFTER_MS).warnFailingSince).toBe(T0);
    expect(health.failed('d3', T0 + WARN_AFTER_MS + 1).warnFailingSince).toBeNull();
    expect(health.failed('d3', T0 + 2 * WARN_AFTER_MS).warnFailingSince).toBe(T0);
  });

  it('keys a device’s own webhook_url and each account webhook apart', () => {
    expect(receiverKey({ device_id: 7, webhook_id: null })).toBe('d7');
    expect(receiverKey({ device_id: 7, webhook_id: 'wh_01' })).toBe('wwh_01');
    expect(receiverOf('d7')).toEqual({ deviceId: 7 });
    expect(receiverOf('wwh_01')).toEqual({ webhookId: 'wh_01' });
  });
});

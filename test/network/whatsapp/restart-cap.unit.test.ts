// The cap on the restarts (515) one WhatsApp connection follows (src/network/whatsapp/restart-cap.ts).
import { describe, expect, it } from 'vitest';
import { RESTART_CAP, RESTART_WINDOW_MS, RestartBudget } from '../../../src/network/whatsapp/restart-cap.js';

describe('the restart budget', () => {
  it('follows RESTART_CAP restarts within the window and refuses the next', () => {
    const budget = new RestartBudget();
    for (let i = 0; i < RESTART_CAP; i++) expect(budget.take(1_000 + i)).toBe(true);
    expect(budget.take(1_000 + RESTART_CAP)).toBe(false);
    expect(budget.reason()).toBe(`the network asked for a restart more than ${RESTART_CAP} times within 60 s`);
  });

  it('forgets restarts older than the window: one now and then never runs out', () => {
    const budget = new RestartBudget(2, 1_000);
    expect(budget.take(0)).toBe(true);
    expect(budget.take(500)).toBe(true);
    expect(budget.take(1_000)).toBe(true);
    expect(budget.take(1_400)).toBe(false);
    expect(budget.take(5_000)).toBe(true);
    expect(RESTART_WINDOW_MS).toBe(60_000);
  });
});

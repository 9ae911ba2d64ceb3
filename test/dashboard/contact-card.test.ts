// A contact's card (issue 27, DECISIONS 16) in a real browser against the sandbox: opened from a chat and from an
// incoming message's sender on the messages page, showing what `GET /contacts/{phone}` has, with block (asked
// first) and unblock, each checked through the API.
import { describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { dashboardSuite, seriousViolations } from './harness.js';

const DEVICE = '6281377000911';
const CITRA = '6281377000912';
const WAIT = { timeout: 15_000 };

describe('a contact’s card', () => {
  let gw: TestGateway;
  let deviceId: number;

  const { open } = dashboardSuite(async (started) => {
    gw = started;
    deviceId = (await createPairedDevice(gw, DEVICE)).id as number;
    const named = await gw.request('POST', '/sandbox/phones', { phone: CITRA, name: 'Citra' });
    expect(named.status, JSON.stringify(named.body)).toBeLessThan(300);
    const sent = await gw.request('POST', `/sandbox/phones/${CITRA}/messages`, { to: DEVICE, text: 'Hello shop' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await waitFor(
      async () => (await gw.request('GET', `/messages?device=${DEVICE}&direction=incoming`)).body.data as unknown[],
      (list) => list.length === 1,
      { what: 'the incoming message', timeoutMs: 10_000 },
    );
  });

  it('opens a contact’s card from a chat and from a message’s sender; blocks (asked first) and unblocks', async () => {
    const contact = async () => (await gw.request('GET', `/contacts/${CITRA}?device=${DEVICE}`)).body.data;
    const p = await open('contact card', `#/devices/${deviceId}/chats/${CITRA}`);
    await p.getByRole('link', { name: 'Contact card', exact: true }).click();
    const card = p.getByRole('region', { name: /Citra|6281377000612/ });
    await card.getByText(CITRA, { exact: true }).waitFor(WAIT);
    const shown = await contact();
    if (shown.name !== null) expect(await card.textContent()).toContain(shown.name);
    expect(await card.textContent()).toContain('On the network');
    expect(shown.blocked).toBe(false);

    await card.getByRole('button', { name: 'Block', exact: true }).click();
    await card.getByRole('group', { name: /^Block / }).waitFor(WAIT);
    await card.getByRole('button', { name: 'Yes, block', exact: true }).click();
    await card.getByRole('button', { name: 'Unblock', exact: true }).waitFor(WAIT);
    expect((await contact()).blocked).toBe(true);
    expect(await card.textContent()).toContain('Yes: its messages and calls do not reach this device');
    await card.getByRole('button', { name: 'Unblock', exact: true }).click();
    await card.getByRole('button', { name: 'Block', exact: true }).waitFor(WAIT);
    expect((await contact()).blocked).toBe(false);
    expect(await seriousViolations(p)).toEqual([]);

    // From the messages page: an incoming message's sender opens the same card.
    await p.goto(`/dashboard/#/devices/${deviceId}/messages`);
    await p.getByRole('link', { name: CITRA, exact: true }).first().click();
    await p
      .getByRole('region', { name: /Citra|6281377000612/ })
      .getByText('On the network')
      .waitFor(WAIT);
    expect(p.url()).toContain(`#/devices/${deviceId}/contacts/${CITRA}`);
  });
});

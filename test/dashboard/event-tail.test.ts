// A device's live events on its overview page (issue 28, DECISIONS 17) in a real browser: the tail fed by the SSE
// stream `GET /events/stream` (the token in the Authorization header, never in the URL), only this device's events,
// paused and resumed after the last cursor shown with nothing lost or shown twice.
import { describe, expect, it } from 'vitest';
import { TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { dashboardSuite, openSignedIn, seriousViolations } from './harness.js';

const SHOP = '6281377000811';
const OFFICE = '6281377000812';
const CUSTOMER = '6281377000813';
const WAIT = { timeout: 15_000 };

describe('a device’s live events', () => {
  let gw: TestGateway;
  let shopId: number;

  const { pages } = dashboardSuite(async (started) => {
    gw = started;
    shopId = (await createPairedDevice(gw, SHOP)).id as number;
    await createPairedDevice(gw, OFFICE);
  });

  const fromCustomer = async (to: string, text: string) => {
    const sent = await gw.request('POST', `/sandbox/phones/${CUSTOMER}/messages`, { to, text });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  };

  it('tails a device’s events live from the stream, the token in a header; paused and resumed, none lost or repeated', async () => {
    const p = (await pages.open('live events')).page;
    const streams: Array<{ url: string; authorization: string | undefined }> = [];
    p.on('request', (r) => {
      if (r.url().includes('/events/stream')) streams.push({ url: r.url(), authorization: r.headers().authorization });
    });
    await openSignedIn(p, `#/devices/${shopId}`);
    const tail = p.getByRole('region', { name: 'Live events' });
    await tail.getByText('Live', { exact: true }).waitFor(WAIT);
    await fromCustomer(OFFICE, 'to the office');
    await fromCustomer(SHOP, 'seen live');
    const list = tail.getByRole('list', { name: 'Events, newest first' });
    // One list item per event: its time, type and a line about it (the body is folded under it).
    const item = (text: string) =>
      list.getByRole('listitem').filter({ hasText: 'message.incoming' }).filter({ hasText: text });
    await item('seen live').waitFor(WAIT);
    // The office's events are not this device's.
    expect(await list.textContent()).not.toContain('to the office');

    await tail.getByRole('button', { name: 'Pause', exact: true }).click();
    await tail.getByText('Paused', { exact: true }).waitFor(WAIT);
    await fromCustomer(SHOP, 'sent while paused');
    await waitFor(
      async () => (await gw.request('GET', `/messages?device=${SHOP}&direction=incoming`)).body.data as unknown[],
      (messages) => JSON.stringify(messages).includes('sent while paused'),
      { what: 'the message stored' },
    );
    expect(await item('sent while paused').count()).toBe(0);
    await tail.getByRole('button', { name: 'Resume', exact: true }).click();
    await item('sent while paused').waitFor(WAIT);
    await tail.getByText('Live', { exact: true }).waitFor(WAIT);
    expect(await item('seen live').count()).toBe(1);

    expect(streams.length).toBeGreaterThanOrEqual(2);
    for (const s of streams) {
      expect(s.url).not.toContain(TEST_TOKEN);
      expect(s.authorization).toBe(`Bearer ${TEST_TOKEN}`);
    }
    expect(await seriousViolations(p)).toEqual([]);
  });
});

// The chats tab (issue 27, DECISIONS 16) in a real browser against the sandbox: the list shows what `GET /chats` has
// (last message, unread count, marks), archiving and unarchiving from the list and from a chat's page, a chat's
// history with both directions, and marking the chat read. Each change is checked through the API.
import { describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { dashboardSuite, seriousViolations } from './harness.js';

const DEVICE = '6281377000611';
const CITRA = '6281377000612';
const DEWI = '6281377000613';
const WAIT = { timeout: 15_000 };

interface ChatRow {
  id: string;
  unread_count: number;
  archived: boolean;
  last_message: { message: string | null } | null;
}

describe('the chats tab', () => {
  let gw: TestGateway;
  let deviceId: number;

  const chats = async (): Promise<ChatRow[]> => {
    const answer = await gw.request('GET', `/chats?device=${DEVICE}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data;
  };
  const chatOf = async (id: string) => (await chats()).find((c) => c.id === id);

  const { open } = dashboardSuite(async (started) => {
    gw = started;
    deviceId = (await createPairedDevice(gw, DEVICE)).id as number;
    const named = await gw.request('POST', '/sandbox/phones', { phone: CITRA, name: 'Citra' });
    expect(named.status, JSON.stringify(named.body)).toBeLessThan(300);
    for (const text of ['Is the shop open?', 'I need two boxes']) {
      const sent = await gw.request('POST', `/sandbox/phones/${CITRA}/messages`, { to: DEVICE, text });
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    }
    const ours = await gw.request('POST', '/messages', {
      device: DEVICE,
      receiver: DEWI,
      type: 'chat',
      params: { text: 'Your parcel left today' },
    });
    expect(ours.status, JSON.stringify(ours.body)).toBe(200);
    await waitFor(
      chats,
      (list) =>
        list.find((c) => c.id === CITRA)?.unread_count === 2 &&
        list.find((c) => c.id === DEWI)?.last_message?.message === 'Your parcel left today',
      { what: 'both chats listed', timeoutMs: 10_000 },
    );
  });

  it('lists the chats with last message and unread count, and archives and unarchives from the list', async () => {
    const p = await open('chats list', `#/devices/${deviceId}/chats`);
    const table = p.getByRole('region', { name: 'Chats table' });
    const citra = table.getByRole('row').filter({ hasText: CITRA });
    await citra.waitFor(WAIT);
    expect(await citra.textContent()).toContain('I need two boxes');
    expect(await citra.getByLabel('2 unread').textContent()).toBe('2');
    const dewi = table.getByRole('row').filter({ hasText: DEWI });
    expect(await dewi.textContent()).toContain('You: Your parcel left today');
    expect(await dewi.getByLabel(/unread/).count()).toBe(0);

    await citra.getByRole('button', { name: /^Archive / }).click();
    await p.getByRole('status').filter({ hasText: 'archived' }).waitFor(WAIT);
    await expect
      .poll(() =>
        citra
          .getByRole('list', { name: 'Marks' })
          .textContent()
          .catch(() => ''),
      )
      .toContain('archived');
    expect((await chatOf(CITRA))?.archived).toBe(true);
    await citra.getByRole('button', { name: /^Unarchive / }).click();
    await p.getByRole('status').filter({ hasText: 'unarchived' }).waitFor(WAIT);
    await expect.poll(() => citra.getByRole('list', { name: 'Marks' }).count()).toBe(0);
    expect((await chatOf(CITRA))?.archived).toBe(false);
    expect(await seriousViolations(p)).toEqual([]);
  });

  it('shows a chat’s history in both directions and marks the chat read', async () => {
    const reply = await gw.request('POST', '/messages', {
      device: DEVICE,
      receiver: CITRA,
      type: 'chat',
      params: { text: 'Yes, until 9' },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const p = await open('chat history', `#/devices/${deviceId}/chats`);
    await p
      .getByRole('region', { name: 'Chats table' })
      .getByRole('link', { name: /Citra|6281377000612/ })
      .click();
    const history = p.getByRole('list', { name: 'Messages, newest first' });
    await history.getByText('Yes, until 9').waitFor(WAIT);
    const items = await history.getByRole('listitem').allTextContents();
    const order = ['Yes, until 9', 'I need two boxes', 'Is the shop open?'].map((t) =>
      items.findIndex((i) => i.includes(t)),
    );
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(items.find((i) => i.includes('Is the shop open?'))).toContain(`From ${CITRA}`);
    expect(items.find((i) => i.includes('Yes, until 9'))).toContain('You');

    await p.getByRole('button', { name: 'Mark chat read', exact: true }).click();
    await p.getByRole('status').filter({ hasText: /read/i }).first().waitFor(WAIT);
    await expect.poll(async () => (await chatOf(CITRA))?.unread_count).toBe(0);
    await p.getByText('0 unread', { exact: true }).waitFor(WAIT);
    const incoming = (await gw.request('GET', `/messages?device=${DEVICE}&direction=incoming`)).body.data as Array<{
      sender: string;
      read_at: string | null;
    }>;
    expect(incoming.filter((m) => m.sender === CITRA).every((m) => m.read_at !== null)).toBe(true);

    await p.getByRole('button', { name: 'Archive chat', exact: true }).click();
    await p.getByRole('button', { name: 'Unarchive chat', exact: true }).waitFor(WAIT);
    expect((await chatOf(CITRA))?.archived).toBe(true);
    await p.getByRole('button', { name: 'Unarchive chat', exact: true }).click();
    await p.getByRole('button', { name: 'Archive chat', exact: true }).waitFor(WAIT);
    expect((await chatOf(CITRA))?.archived).toBe(false);
    expect(await seriousViolations(p)).toEqual([]);
  });
});

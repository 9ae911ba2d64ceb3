// Group receipts through the WhatsApp stand-in (issue 24, item 2; docs/whatsapp.md, Group receipts): a phone makes a
// group with two other phones and the device's own phone, the gateway sends to it, each member's phone answers with a
// delivery receipt naming itself as the participant (as WhatsApp does, by its LID), and the message becomes
// `delivered` on the first; a member reading it makes it read. The message object lists every member's receipt by
// phone number, and `message.delivered` / `message.read` are each announced once however many members receipt.
// SQLite only (vitest.config.ts): the store is not what this tests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const DEVICE_PHONE = '15551240001';
const OWNER = '15551240002';
const OTHER = '15551240003';

let world: StandinWorld;

beforeAll(async () => {
  world = await startStandinWorld(5);
  await world.startGateway();
  await world.pairedDevice('group receipts', DEVICE_PHONE);
});

afterAll(async () => {
  await world?.stop();
});

describe('group receipts through the WhatsApp stand-in', () => {
  it('moves a group message to delivered, then read, as members receipt it, and lists each member', async () => {
    const { body } = await world.standin.call('POST', '/control/groups', {
      subject: 'Receipts',
      members: [OWNER, OTHER, DEVICE_PHONE],
    });
    const group = await waitFor(
      async () =>
        ((await world.api('GET', `/groups?device=${DEVICE_PHONE}&per_page=100`)).body.data as any[]).find(
          (g) => g.network_id === body.id,
        ),
      (g) => g !== undefined,
      { ...WAIT, what: 'the group synced' },
    );
    const sent = await world.api('POST', `/groups/${group.id}/send`, { type: 'chat', params: { text: 'receipt me' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const id = sent.body.data.id as string;

    // Both members' phones have it and have answered with their delivery receipts.
    const delivered = await waitFor(
      () => world.message(id),
      (m) => m.status === 'delivered' && m.receipts?.filter((r: any) => r.delivered_at !== null).length === 2,
      { ...WAIT, what: 'delivered to both members' },
    );
    expect(delivered.read_at).toBeNull();
    expect([...delivered.receipts].sort((a: any, b: any) => a.phone.localeCompare(b.phone))).toEqual([
      { phone: OWNER, delivered_at: expect.any(String), read_at: null },
      { phone: OTHER, delivered_at: expect.any(String), read_at: null },
    ]);
    // The message took its delivery time from the member receipt that moved it.
    expect(delivered.receipts.map((r: any) => r.delivered_at)).toContain(delivered.delivered_at);

    const networkId = (await world.phone(OTHER)).inbox.find((m: any) => m.text === 'receipt me').id as string;
    const readReceipt = await world.standin.call('POST', `/control/phones/${OTHER}/read`, { message_id: networkId });
    expect(readReceipt.status, JSON.stringify(readReceipt.body)).toBe(200);
    const read = await waitFor(
      () => world.message(id),
      (m) => m.read_at !== null,
      { ...WAIT, what: 'read by a member' },
    );
    expect(read.status).toBe('delivered');
    expect(read.receipts.find((r: any) => r.phone === OTHER).read_at).toBe(read.read_at);
    expect(read.receipts.find((r: any) => r.phone === OWNER).read_at).toBeNull();

    // The list shows the same receipts.
    const listed = await world.api('GET', `/messages?device=${DEVICE_PHONE}&limit=5`);
    expect(listed.body.data.find((m: any) => m.id === id).receipts).toEqual(read.receipts);

    // The second member reading it adds its receipt, and the message's events stay one each.
    const ownerReads = await world.standin.call('POST', `/control/phones/${OWNER}/read`, { message_id: networkId });
    expect(ownerReads.status, JSON.stringify(ownerReads.body)).toBe(200);
    const both = await waitFor(
      () => world.message(id),
      (m) => m.receipts.every((r: any) => r.read_at !== null),
      { ...WAIT, what: 'read by both members' },
    );
    expect(both.read_at).toBe(read.read_at);
    const events = await waitFor(
      async () => world.hooks.events().filter((e) => e.data?.id === id),
      (list) => list.some((e) => e.type === 'message.read'),
      { ...WAIT, what: 'the read event' },
    );
    expect(events.filter((e) => e.type === 'message.delivered')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'message.read')).toHaveLength(1);
  });
});

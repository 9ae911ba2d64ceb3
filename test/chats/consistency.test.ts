// Issue 27: the chat list is kept with the messages, never recomputed. 5,000 messages in both directions over 200
// chats, sent concurrently with chat reads and archive changes: afterwards every chat's last message and unread
// count equal what the messages table says, and there is exactly one chat per (device, chat) with messages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { numbers } from '../groups/helpers.js';

const build = { sandbox: { deliveryDelayMs: 1, readDelayMs: 1 } };
const CHATS = 200;
const EACH_WAY = 2500;
const IN_FLIGHT = 16;

/** Runs `jobs` with at most `width` at once. */
async function pool(jobs: Array<() => Promise<void>>, width: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
}

describe.skipIf(noStoreAvailable)('chat list consistency', () => {
  let gw: TestGateway;
  let device: string;
  let deviceId: number;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    const paired = await createPairedDevice(gw, '6284299000001');
    device = paired.phone;
    deviceId = paired.id;
  });
  afterAll(() => gw?.close());

  it('keeps every chat’s last message and unread count equal to the messages table under concurrent writes', async () => {
    const phones = numbers('62842')(CHATS);
    const jobs: Array<() => Promise<void>> = [];
    const ok = (what: string) => (res: { status: number; body: unknown }) => {
      if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    };
    for (let i = 0; i < EACH_WAY; i++) {
      const phone = phones[i % CHATS]!;
      jobs.push(async () =>
        ok('send')(await gw.request('POST', '/messages', { device, receiver: phone, type: 'chat', message: `o${i}` })),
      );
      jobs.push(async () =>
        ok('receive')(await gw.request('POST', `/sandbox/phones/${phone}/messages`, { to: device, text: `i${i}` })),
      );
      if (i % 10 === 0) {
        const target = phones[(i * 7) % CHATS]!;
        jobs.push(async () => ok('read')(await gw.request('POST', `/chats/${target}/read`, { device })));
      }
      if (i % 25 === 0) {
        const target = phones[(i * 13) % CHATS]!;
        jobs.push(async () =>
          ok('archive')(await gw.request('PATCH', `/chats/${target}`, { device, archived: i % 50 === 0 })),
        );
      }
    }
    await pool(jobs, IN_FLIGHT);

    const db = gw.app.store.db;
    // Every message the phones sent is stored (the device writes what it hears in its own time).
    await waitFor(
      async () =>
        Number(
          (
            await db
              .selectFrom('messages')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('device_id', '=', deviceId)
              .where('direction', '=', 'incoming')
              .executeTakeFirstOrThrow()
          ).n,
        ),
      (n) => n === EACH_WAY,
      { timeoutMs: 60_000, what: 'every incoming message stored' },
    );

    const messages = await db
      .selectFrom('messages')
      .select(['id', 'chat', 'direction', 'created_at', 'read_at'])
      .where('device_id', '=', deviceId)
      .where('direction', 'in', ['incoming', 'outgoing'])
      .execute();
    expect(messages).toHaveLength(2 * EACH_WAY);
    const expected = new Map<string, { last: { id: string; at: number }; unread: number }>();
    for (const m of messages) {
      const at = Number(m.created_at);
      const entry = expected.get(m.chat!) ?? { last: { id: m.id, at }, unread: 0 };
      if (at > entry.last.at || (at === entry.last.at && m.id > entry.last.id)) entry.last = { id: m.id, at };
      if (m.direction === 'incoming' && m.read_at === null) entry.unread += 1;
      expected.set(m.chat!, entry);
    }
    const chats = await db.selectFrom('chats').selectAll().where('device_id', '=', deviceId).execute();
    expect(chats).toHaveLength(CHATS);
    expect(new Set(chats.map((c) => c.chat))).toEqual(new Set(phones));
    let someUnread = 0;
    let someRead = 0;
    for (const row of chats) {
      const want = expected.get(row.chat)!;
      expect({
        chat: row.chat,
        last: row.last_message_id,
        at: Number(row.last_message_at),
        unread: Number(row.unread_count),
      }).toEqual({ chat: row.chat, last: want.last.id, at: want.last.at, unread: want.unread });
      if (want.unread > 0) someUnread += 1;
      if (want.unread < EACH_WAY / CHATS) someRead += 1;
    }
    // The run exercised both: chats read meanwhile, and chats left with unread messages.
    expect(someUnread).toBeGreaterThan(0);
    expect(someRead).toBeGreaterThan(0);

    // The API shows the same: the whole list, paged, agrees with the table.
    const listed: any[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/chats?device=${device}&limit=100${cursor === null ? '' : `&cursor=${cursor}`}`;
      const res = await gw.request('GET', url);
      listed.push(...res.body.data);
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    expect(listed).toHaveLength(CHATS);
    for (const chat of listed) {
      expect(chat.last_message.id).toBe(expected.get(chat.id)!.last.id);
      expect(chat.unread_count).toBe(expected.get(chat.id)!.unread);
    }
  }, 600_000);
});

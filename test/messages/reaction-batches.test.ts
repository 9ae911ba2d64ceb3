// Reactions written in batches (src/messages/reaction-writer.ts), on both stores: a batch is decided in arrival
// order on the state its earlier reactions left, written with one upsert/delete of the end state and one insert of
// the queue rows; a refused reaction writes nothing and frees its key; a key claimed earlier in the batch answers
// its later requests.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { devicesRepository } from '../../src/devices/repository.js';
import { ApiError } from '../../src/errors.js';
import { ReactionWriter, type ReactionRequest } from '../../src/messages/reaction-writer.js';
import { reactionsRepository } from '../../src/messages/reactions.js';
import { Committer } from '../../src/store/batcher.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

describe.skipIf(noStoreAvailable)('reaction batches', () => {
  let gw: TestGateway;
  let phone: string;
  let deviceId: number;
  let writer: ReactionWriter;
  const unpaired = new Set<string>();

  beforeAll(async () => {
    gw = await startGateway({
      build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } },
      config: { sendIntervalMs: 0 },
    });
    ({ phone, id: deviceId } = await createPairedDevice(gw, '6281577000001'));
    // A writer of the test's own: its batches are exactly what one turn of the event loop submits.
    // Its device check refuses the messages in `unpaired` as the gateway's does a device no longer paired.
    writer = new ReactionWriter(
      new Committer(gw.app.store.db),
      systemClock,
      {
        find: (db, accountId, phone) => devicesRepository.findByPhone(db, accountId, phone),
        check: (row, device) =>
          device === undefined || device.phone === null || unpaired.has(row.id)
            ? new ApiError('DEVICE_NOT_CONNECTED', { error: 'not paired' })
            : { ...device, phone: device.phone },
      },
      undefined,
      undefined,
    );
  });
  afterAll(() => gw?.close());

  const get = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  const sent = async (text: string) => {
    const res = await gw.request('POST', '/messages', {
      device: phone,
      receiver: '6281577121212',
      type: 'chat',
      params: { text },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.data.id as string;
    await waitFor(
      () => get(id),
      (m) => m.status !== 'pending',
      { what: `message ${id} sent` },
    );
    return id;
  };
  const request = (id: string, emoji: string, key?: string, requestHash = key === undefined ? '' : emoji) =>
    ({ accountId: 1, messageId: id, emoji, key, requestHash }) satisfies ReactionRequest;
  const actionRowsOf = async (id: string) =>
    (
      await gw.app.store.db
        .selectFrom('messages')
        .select(['message', 'params', 'quoted'])
        .where('direction', '=', 'action')
        .orderBy('seq')
        .execute()
    ).filter((row) => JSON.parse(row.params).message_id === id);
  const storedReactions = (id: string) =>
    gw.app.store.db.selectFrom('message_reactions').select(['phone', 'emoji']).where('message_id', '=', id).execute();

  it('decides a batch in arrival order, answers each with the reactions right after it, writes the end state once', async () => {
    const [one, two] = [await sent('one'), await sent('two')];
    const items = [request(one, '👍'), request(one, '❤️'), request(one, '❤️'), request(two, '🎉'), request(one, '')];
    const writes = vi.spyOn(reactionsRepository, 'writeMany');
    const outcomes = await Promise.all(items.map((item) => writer.accept(item)));
    expect(writes).toHaveBeenCalledTimes(1);
    writes.mockRestore();
    expect(outcomes.map((o) => (o.kind === 'ok' ? o.queued : o.kind))).toEqual([true, true, false, true, true]);
    const shown = outcomes.map((o) => (o.kind === 'ok' ? (o.answer.data.reactions ?? []) : null));
    expect(shown).toEqual([
      [{ from: phone, emoji: '👍' }],
      [{ from: phone, emoji: '❤️' }],
      [{ from: phone, emoji: '❤️' }],
      [{ from: phone, emoji: '🎉' }],
      [],
    ]);
    expect(outcomes.map((o) => (o.kind === 'ok' ? o.answer.message : o.kind))).toEqual([
      'Reaction sent',
      'Reaction sent',
      'Reaction sent',
      'Reaction sent',
      'Reaction removed',
    ]);
    expect(await storedReactions(one)).toEqual([]);
    expect(await storedReactions(two)).toEqual([{ phone, emoji: '🎉' }]);
    // One queue row per change, in arrival order, each naming its target as the network knows it.
    const rows = await actionRowsOf(one);
    expect(rows.map((row) => row.message)).toEqual(['👍', '❤️', '']);
    expect(rows.map((row) => JSON.parse(row.quoted!))).toEqual(
      rows.map(() => ({ id: one, fromMe: true, chat: '6281577121212' })),
    );
    expect(await actionRowsOf(two)).toHaveLength(1);

    // A stored reaction replaced and then taken away in later batches.
    const replaced = await writer.accept(request(two, '😮'));
    expect(replaced.kind === 'ok' && replaced.answer.data.reactions).toEqual([{ from: phone, emoji: '😮' }]);
    expect(await storedReactions(two)).toEqual([{ phone, emoji: '😮' }]);
    const removed = await Promise.all([writer.accept(request(two, '')), writer.accept(request(two, ''))]);
    expect(removed.map((o) => o.kind === 'ok' && o.queued)).toEqual([true, false]);
    expect(await storedReactions(two)).toEqual([]);
  });

  it('a refused reaction writes nothing and frees its key; a key claimed earlier in the batch answers the later ones', async () => {
    const ok = await sent('fine');
    const failed = await sent('will be failed');
    // A message that failed to send cannot be reacted to (nothing reached the network).
    await gw.app.store.db.updateTable('messages').set({ status: 'failed' }).where('id', '=', failed).execute();
    const items = [
      request(failed, '👍', 'refused-key'),
      request(failed, '👍', 'refused-key'),
      request(ok, '🎉', 'ok-key'),
      request(ok, '🎉', 'ok-key'),
      request(ok, '😂', 'ok-key'),
    ];
    const outcomes = await Promise.all(items.map((item) => writer.accept(item)));
    expect(outcomes[0]!.kind).toBe('refused');
    const refusal = outcomes[0]!.kind === 'refused' ? outcomes[0]!.error : null;
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal?.code).toBe('VALIDATION_FAILED');
    // The same request again is refused alike.
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[2]!.kind).toBe('ok');
    // The same body replays the first answer; another body is the stored request's, so a 409 for its caller.
    expect(outcomes[3]).toEqual({
      kind: 'replay',
      requestHash: '🎉',
      response: JSON.stringify(outcomes[2]!.kind === 'ok' ? outcomes[2]!.answer : null),
    });
    expect(outcomes[4]).toMatchObject({ kind: 'replay', requestHash: '🎉' });

    const keys = await gw.app.store.db
      .selectFrom('idempotency_keys')
      .select(['key', 'response'])
      .where('key', 'in', ['refused-key', 'ok-key'])
      .execute();
    expect(keys.map((k) => k.key)).toEqual(['ok-key']);
    expect(JSON.parse(keys[0]!.response)).toEqual(outcomes[2]!.kind === 'ok' ? outcomes[2]!.answer : null);
    expect(await storedReactions(failed)).toEqual([]);
    expect(await actionRowsOf(failed)).toEqual([]);
    expect(await storedReactions(ok)).toEqual([{ phone, emoji: '🎉' }]);
    expect(await actionRowsOf(ok)).toHaveLength(1);
  });

  it('checks each message and its device in the batch: a refused one keeps nothing, its neighbours commit', async () => {
    const ok = await sent('checked');
    const gone = await sent('its device unpaired');
    unpaired.add(gone);
    const items = [
      request('01NOSUCHMESSAGE0000000000', '👍', 'unknown-key'),
      // Another account's message is not found in this one.
      { ...request(ok, '👍'), accountId: 999 },
      request(gone, '👍', 'unpaired-key'),
      request(ok, '🙏', 'checked-key'),
    ];
    const outcomes = await Promise.all(items.map((item) => writer.accept(item)));
    expect(outcomes.map((o) => (o.kind === 'refused' ? o.error.code : o.kind))).toEqual([
      'MESSAGE_NOT_FOUND',
      'MESSAGE_NOT_FOUND',
      'DEVICE_NOT_CONNECTED',
      'ok',
    ]);
    // The device the queue is told of is the message's.
    expect(outcomes[3]).toMatchObject({ kind: 'ok', queued: true, deviceId });
    const keys = await gw.app.store.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('key', 'in', ['unknown-key', 'unpaired-key', 'checked-key'])
      .execute();
    expect(keys.map((k) => k.key)).toEqual(['checked-key']);
    expect(await storedReactions(gone)).toEqual([]);
    expect(await actionRowsOf(gone)).toEqual([]);
    expect(await storedReactions(ok)).toEqual([{ phone, emoji: '🙏' }]);
    expect(await actionRowsOf(ok)).toHaveLength(1);
  });

  it('through the route: a suspended device is refused (403 Device suspended) and nothing is kept', async () => {
    const id = await sent('to a device about to be suspended');
    await gw.app.services.devices.setStatus(deviceId, 'SUSPENDED');
    try {
      const res = await gw.request('POST', `/messages/${id}/reaction`, { emoji: '👍' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ code: 403, status: 403, message: 'Device suspended' });
      expect(await storedReactions(id)).toEqual([]);
      expect(await actionRowsOf(id)).toEqual([]);
    } finally {
      await gw.app.services.devices.setStatus(deviceId, 'ACTIVE');
    }
  });
});

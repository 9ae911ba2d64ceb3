// Retention (docs/internals.md, Retention; issue 10 item 14): ended webhook deliveries and
// their attempts are kept GATEWAY_WEBHOOK_RETENTION_DAYS, idempotency keys
// 24 h, messages GATEWAY_MESSAGE_RETENTION_DAYS (0: for ever). Clean-up works
// in small batches in the background; nothing pending is ever deleted. The
// clock is driven by the test; rows are seeded at chosen ages.
import { afterEach, describe, expect, it } from 'vitest';
import { ulid } from 'ulid';
import { ManualClock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { messageRow } from '../helpers/rows.js';
import { waitFor } from '../helpers/wait.js';

const DAY = 24 * 60 * 60_000;
const HOUR = 60 * 60_000;

describe.skipIf(noStoreAvailable)('retention', () => {
  let gw: TestGateway | undefined;
  let accountId = 0;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  async function start(config: Partial<Config>, intervalMs = 3_600_000) {
    const clock = new ManualClock(Date.now());
    gw = await startGateway({ clock, config, build: { retention: { intervalMs, batchSize: 4, pauseMs: 0 } } });
    await gw.app.ready();
    const device = await gw.request('POST', '/devices', { package: 'BETA', name: 'kept things' });
    expect(device.status).toBe(201);
    accountId = await accountOf(gw, device.body.data.id as number);
    return { g: gw, clock, deviceId: device.body.data.id as number };
  }

  async function accountOf(g: TestGateway, deviceId: number): Promise<number> {
    const row = await g.app.store.db
      .selectFrom('devices')
      .select('account_id')
      .where('id', '=', deviceId)
      .executeTakeFirstOrThrow();
    return Number(row.account_id);
  }

  async function seedDelivery(
    g: TestGateway,
    deviceId: number,
    status: 'pending' | 'delivered' | 'failed' | 'skipped',
    endedAt: number,
    attempts = 2,
  ): Promise<string> {
    const id = `evt_${ulid(endedAt)}`;
    // In one transaction, as the deliverer writes them: a sweep running meanwhile sees all of it or none.
    await g.app.store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_events')
        .values({
          id,
          account_id: accountId,
          device_id: deviceId,
          type: 'message.sent',
          payload: '{}',
          url: 'http://127.0.0.1:9/hook',
          status,
          attempts,
          next_attempt_at: status === 'pending' ? endedAt + 365 * DAY : endedAt,
          locked_until: null,
          created_at: endedAt - HOUR,
          delivered_at: status === 'delivered' ? endedAt : null,
          failed_at: status === 'failed' ? endedAt : null,
        })
        .execute();
      for (let i = 0; i < attempts; i++) {
        await trx
          .insertInto('webhook_attempts')
          .values({ event_id: id, attempted_at: endedAt - i, http_status: 500, latency_ms: 3, error: null, url: null })
          .execute();
      }
    });
    return id;
  }

  async function seedMessage(
    g: TestGateway,
    deviceId: number,
    status: string,
    createdAt: number,
    { direction = 'outgoing', media = false } = {},
  ): Promise<string> {
    const id = ulid(createdAt);
    await g.app.store.db
      .insertInto('messages')
      .values(
        messageRow(id, accountId, deviceId, {
          direction,
          type: media ? 'image' : 'chat',
          device_phone: '6281700004001',
          receiver: '6281799994001',
          message: 'old news',
          status,
          created_at: createdAt,
          sent_at: status === 'pending' ? null : createdAt,
          delivered_at: status === 'delivered' ? createdAt : null,
        }),
      )
      .execute();
    if (media) {
      await g.app.store.db
        .insertInto('message_media')
        .values({ message_id: id, mimetype: 'image/png', bytes: new Uint8Array(), media_id: `media-${id}` })
        .execute();
      await g.app.store.db
        .insertInto('media_chunks')
        .values({ media_id: `media-${id}`, seq: 0, bytes: new Uint8Array([1, 2, 3]), size: 3, created_at: createdAt })
        .execute();
    }
    return id;
  }

  async function seedKey(g: TestGateway, key: string, createdAt: number): Promise<void> {
    await g.app.store.db
      .insertInto('idempotency_keys')
      .values({ account_id: accountId, key, request_hash: 'h', response: '{}', created_at: createdAt })
      .execute();
  }

  const count = async (g: TestGateway, table: 'webhook_events' | 'webhook_attempts' | 'idempotency_keys') =>
    Number(
      (
        await g.app.store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('deletes skipped deliveries (their format had no body for them) by when they were made', async () => {
    const { g, clock, deviceId } = await start({ webhookRetentionDays: 7 });
    const now = clock.now();
    // A skipped delivery ends when first due: seeded as made an hour before `endedAt`.
    const old = await seedDelivery(g, deviceId, 'skipped', now - 7 * DAY + HOUR - 1, 1);
    const young = await seedDelivery(g, deviceId, 'skipped', now - 7 * DAY + HOUR + 60_000, 1);
    expect(await g.app.services.retention.sweep()).toMatchObject({ deliveries: 1 });
    expect((await g.app.store.db.selectFrom('webhook_events').select('id').execute()).map((e) => e.id)).toEqual([
      young,
    ]);
    const attempts = await g.app.store.db.selectFrom('webhook_attempts').select('event_id').execute();
    expect(attempts.map((a) => a.event_id)).toEqual([young]);
    expect(old).not.toBe(young);
  });

  it('deletes what is past its time, in batches, and keeps everything pending or younger', async () => {
    const { g, clock, deviceId } = await start({ webhookRetentionDays: 7, messageRetentionDays: 30 });
    const now = clock.now();
    const oldDeliveries: string[] = [];
    for (let i = 0; i < 9; i++) oldDeliveries.push(await seedDelivery(g, deviceId, 'delivered', now - 8 * DAY - i));
    for (let i = 0; i < 3; i++) oldDeliveries.push(await seedDelivery(g, deviceId, 'failed', now - 7 * DAY - 1 - i));
    const keptDeliveries = [
      await seedDelivery(g, deviceId, 'delivered', now - 6 * DAY),
      await seedDelivery(g, deviceId, 'failed', now - 7 * DAY + 60_000),
      // Pending, however old: never deleted by retention.
      await seedDelivery(g, deviceId, 'pending', now - 20 * DAY),
    ];
    for (let i = 0; i < 5; i++) await seedKey(g, `old-${i}`, now - 25 * HOUR);
    await seedKey(g, 'young', now - 23 * HOUR);
    const oldMessages = [
      await seedMessage(g, deviceId, 'delivered', now - 31 * DAY),
      await seedMessage(g, deviceId, 'failed', now - 31 * DAY + 1, { media: true }),
      await seedMessage(g, deviceId, 'sent', now - 40 * DAY),
      await seedMessage(g, deviceId, 'delivered', now - 45 * DAY, { direction: 'incoming' }),
      await seedMessage(g, deviceId, 'delivered', now - 50 * DAY),
    ];
    const keptMessages = [
      await seedMessage(g, deviceId, 'pending', now - 60 * DAY),
      await seedMessage(g, deviceId, 'delivered', now - 29 * DAY),
    ];
    // Phones' reactions go with their messages (010a).
    await g.app.store.db
      .insertInto('message_reactions')
      .values([
        { message_id: oldMessages[3]!, phone: '6289900000001', emoji: '👍', reacted_at: now - 44 * DAY },
        { message_id: keptMessages[1]!, phone: '6289900000001', emoji: '❤️', reacted_at: now - 28 * DAY },
      ])
      .execute();
    // So do the votes on them (011c).
    await g.app.store.db
      .insertInto('poll_votes')
      .values([
        { message_id: oldMessages[3]!, voter: '6289900000001', selected: '["A"]', voted_at: now - 44 * DAY },
        { message_id: keptMessages[1]!, voter: '6289900000001', selected: '["B"]', voted_at: now - 28 * DAY },
      ])
      .execute();

    const report = await g.app.services.retention.sweep();
    expect(report).toMatchObject({ deliveries: 12, events: 0, idempotencyKeys: 5, messages: 5 });
    // Batches of 4: 12 deliveries take 4 batches (the last finds none), the empty event log 1, 5 keys 2, 5 messages 2.
    expect(report.batches).toBe(9);

    const events = await g.app.store.db.selectFrom('webhook_events').select('id').execute();
    expect(events.map((e) => e.id).sort()).toEqual([...keptDeliveries].sort());
    const attempts = await g.app.store.db.selectFrom('webhook_attempts').select('event_id').execute();
    expect(new Set(attempts.map((a) => a.event_id))).toEqual(new Set(keptDeliveries));
    const keys = await g.app.store.db.selectFrom('idempotency_keys').select('key').execute();
    expect(keys.map((k) => k.key)).toEqual(['young']);
    for (const id of oldMessages) {
      expect((await g.request('GET', `/messages/${id}`)).body).toEqual({
        code: 404,
        status: 404,
        message: 'Message not found',
      });
    }
    for (const id of keptMessages) expect((await g.request('GET', `/messages/${id}`)).status).toBe(200);
    expect(await g.app.store.db.selectFrom('message_media').select('message_id').execute()).toEqual([]);
    expect(await g.app.store.db.selectFrom('media_chunks').select('media_id').execute()).toEqual([]);
    expect(await g.app.store.db.selectFrom('message_reactions').select('message_id').execute()).toEqual([
      { message_id: keptMessages[1] },
    ]);
    expect(await g.app.store.db.selectFrom('poll_votes').select('message_id').execute()).toEqual([
      { message_id: keptMessages[1] },
    ]);

    // Time passes: what was young is now old too (the pending ones stay).
    clock.advance(2 * DAY);
    const later = await g.app.services.retention.sweep();
    expect(later).toMatchObject({ deliveries: 2, idempotencyKeys: 1, messages: 1 });
    expect((await g.app.store.db.selectFrom('webhook_events').select('status').execute()).map((e) => e.status)).toEqual(
      ['pending'],
    );
    expect((await g.request('GET', `/messages/${keptMessages[0]}`)).body.data.status).toBe('pending');
  });

  it('keeps messages for ever by default (0), and deliveries too when their setting is 0', async () => {
    const { g, clock, deviceId } = await start({ webhookRetentionDays: 0, messageRetentionDays: 0 });
    const now = clock.now();
    const message = await seedMessage(g, deviceId, 'delivered', now - 3650 * DAY);
    await seedDelivery(g, deviceId, 'delivered', now - 3650 * DAY);
    await seedKey(g, 'old', now - 25 * HOUR);
    expect(await g.app.services.retention.sweep()).toMatchObject({ deliveries: 0, idempotencyKeys: 1, messages: 0 });
    expect((await g.request('GET', `/messages/${message}`)).status).toBe(200);
    expect(await count(g, 'webhook_events')).toBe(1);
    expect(await count(g, 'webhook_attempts')).toBe(2);
  });

  it('runs by itself in the background once the gateway is up', async () => {
    const { g, clock, deviceId } = await start({ webhookRetentionDays: 7 }, 50);
    const now = clock.now();
    for (let i = 0; i < 10; i++) await seedDelivery(g, deviceId, 'delivered', now - 30 * DAY - i);
    await seedKey(g, 'old', now - 48 * HOUR);
    await waitFor(
      async () => [
        await count(g, 'webhook_events'),
        await count(g, 'webhook_attempts'),
        await count(g, 'idempotency_keys'),
      ],
      (counts) => counts.every((n) => n === 0),
      { what: 'the background sweep', timeoutMs: 10_000 },
    );
  });
});

// docs/internals.md, WhatsApp and sandbox accounts and issue 12: a WhatsApp session's credentials and Signal keys
// live in the gateway's store (SQLite or PostgreSQL), sealed; every key write
// is one transaction; a failed write is an error; one writer per session.
// Driven by the real Signal library Baileys uses, with two parties talking.
import {
  addTransactionCapability,
  Curve,
  DEFAULT_CONNECTION_CONFIG,
  type SignalKeyStoreWithTransaction,
  type SignalRepositoryWithLIDStore,
} from 'baileys';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { SqlNetworkStateStore } from '../../../src/devices/network-state.js';
import { StaleNetworkStateError } from '../../../src/network/state.js';
import { loadSessionAuth, resealSession, type SessionAuth } from '../../../src/network/whatsapp/auth-state.js';
import { Sealer, UnreadableStateError } from '../../../src/network/whatsapp/seal.js';
import { openStore, type Store } from '../../../src/store/store.js';
import { newStoreLocation, noStoreAvailable, storeKind, type StoreLocation } from '../../helpers/gateway.js';
import { introduce } from './signal-parties.js';

const K1 = Buffer.alloc(32, 0x11);
const K2 = Buffer.alloc(32, 0x22);
const ALICE = '4915100000001@s.whatsapp.net';
const BOB = '4915100000002@s.whatsapp.net';
const logger = pino({ level: 'silent' });

/** Makes the N-th matching statement (counted after `arm`) fail, as a lost connection or full disk would. */
class FailingStatement implements KyselyPlugin {
  private remaining: number | null = null;
  constructor(private readonly matches: (node: RootOperationNode) => boolean) {}
  arm(nth: number): void {
    this.remaining = nth;
  }
  disarm(): void {
    this.remaining = null;
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.remaining !== null && this.matches(args.node)) {
      this.remaining -= 1;
      if (this.remaining === 0) {
        this.remaining = null;
        throw new Error('injected write failure');
      }
    }
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

const keyInserts = (node: RootOperationNode) =>
  node.kind === 'InsertQueryNode' && JSON.stringify(node.into).includes('network_auth_keys');

interface Party {
  readonly auth: SessionAuth;
  readonly keys: SignalKeyStoreWithTransaction;
  readonly repo: SignalRepositoryWithLIDStore;
}

describe.skipIf(noStoreAvailable)('WhatsApp auth state in the store', () => {
  let location: StoreLocation;
  let store: Store;
  let failing: FailingStatement;
  const extraStores: Store[] = [];

  function stateStore(over: Store = store): SqlNetworkStateStore {
    return new SqlNetworkStateStore(over, systemClock);
  }

  /** The store as the connector sees it, with a statement that can be made to fail. */
  function faultyStore(): Store {
    return { ...store, db: store.db.withPlugin(failing) };
  }

  async function party(session: string, sealer: Sealer, fresh: boolean, over: Store = store): Promise<Party> {
    const writer = await stateStore(over).claim(session, { create: fresh });
    if (writer === null) throw new Error(`no session ${session}`);
    const auth = await loadSessionAuth(writer, sealer, { fresh });
    const keys = addTransactionCapability(auth.state.keys, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    const repo = DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: auth.state.creds, keys }, logger);
    return { auth, keys, repo };
  }

  async function say(from: Party, to: Party, fromJid: string, toJid: string, text: string): Promise<string> {
    const sealed = await from.repo.encryptMessage({ jid: toJid, data: Buffer.from(text) });
    const plain = await to.repo.decryptMessage({ jid: fromJid, type: sealed.type, ciphertext: sealed.ciphertext });
    return Buffer.from(plain).toString();
  }

  async function keyCount(session: string, kind?: string): Promise<number> {
    let query = store.db
      .selectFrom('network_auth_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('session_id', '=', session);
    if (kind !== undefined) query = query.where('kind', '=', kind);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }

  beforeEach(async () => {
    location = await newStoreLocation();
    store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    await store.migrate();
    failing = new FailingStatement(keyInserts);
  });
  afterEach(async () => {
    for (const extra of extraStores.splice(0)) await extra.close();
    await store.close();
    await location.drop();
  });

  it('a conversation continues after the store is closed and reopened (a restart)', async () => {
    const sealer = new Sealer({ current: K1, previous: [] });
    const alice = await party('wa1.alice', sealer, true);
    const bob = await party('wa1.bob', sealer, true);
    await introduce(alice, bob, BOB);
    expect(await say(alice, bob, ALICE, BOB, 'hello')).toBe('hello');
    expect(await say(bob, alice, BOB, ALICE, 'hi back')).toBe('hi back');
    expect(await say(alice, bob, ALICE, BOB, 'second')).toBe('second');
    // The one-time pre-key was used up and deleted; the sessions are stored.
    expect(await keyCount('wa1.bob', 'pre-key')).toBe(0);
    expect(await keyCount('wa1.alice', 'session')).toBe(1);
    expect(await keyCount('wa1.bob', 'session')).toBe(1);

    await store.close();
    store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    const alice2 = await party('wa1.alice', sealer, false);
    const bob2 = await party('wa1.bob', sealer, false);
    expect(alice2.auth.state.creds.registrationId).toBe(alice.auth.state.creds.registrationId);
    expect(Buffer.from(bob2.auth.state.creds.noiseKey.private)).toEqual(
      Buffer.from(bob.auth.state.creds.noiseKey.private),
    );
    for (let i = 0; i < 3; i += 1) {
      expect(await say(alice2, bob2, ALICE, BOB, `after restart ${i}`)).toBe(`after restart ${i}`);
      expect(await say(bob2, alice2, BOB, ALICE, `reply ${i}`)).toBe(`reply ${i}`);
    }
  });

  it('stores nothing readable: every value is sealed, none holds the plaintext', async () => {
    const sealer = new Sealer({ current: K1, previous: [] });
    const alice = await party('wa1.alice', sealer, true);
    const { creds } = alice.auth.state;
    const row = await store.db
      .selectFrom('network_auth')
      .selectAll()
      .where('session_id', '=', 'wa1.alice')
      .executeTakeFirstOrThrow();
    const stored = Buffer.from(row.creds!);
    expect(stored[0]).toBe(1);
    expect(stored.includes(Buffer.from(creds.noiseKey.private))).toBe(false);
    expect(stored.toString('latin1')).not.toContain('registrationId');
  });

  it('a new session without credentials is refused unless it is a fresh pairing', async () => {
    const sealer = new Sealer({ current: K1, previous: [] });
    const writer = await stateStore().claim('wa1.empty', { create: true });
    await expect(loadSessionAuth(writer!, sealer, { fresh: false })).rejects.toThrow(
      'stored network state cannot be read: no credentials are stored for this session',
    );
    expect(await stateStore().claim('wa1.never-made', { create: false })).toBeNull();
  });

  it('a failed key write rejects, writes nothing of that set, and the conversation goes on once the store recovers', async () => {
    const sealer = new Sealer({ current: K1, previous: [] });
    const faulty = faultyStore();
    const alice = await party('wa1.alice', sealer, true, faulty);
    const bob = await party('wa1.bob', sealer, true, faulty);
    await introduce(alice, bob, BOB);
    expect(await say(alice, bob, ALICE, BOB, 'one')).toBe('one');

    // Bob's receipt of the next message fails to store his ratchet: the error reaches the caller.
    const next = await alice.repo.encryptMessage({ jid: BOB, data: Buffer.from('two') });
    failing.arm(1);
    await expect(bob.repo.decryptMessage({ jid: ALICE, type: next.type, ciphertext: next.ciphertext })).rejects.toThrow(
      'injected write failure',
    );
    failing.disarm();
    // The network delivers the same ciphertext again (no receipt was sent): it decrypts, since nothing half-done was stored.
    const again = await bob.repo.decryptMessage({ jid: ALICE, type: next.type, ciphertext: next.ciphertext });
    expect(Buffer.from(again).toString()).toBe('two');
    expect(await say(bob, alice, BOB, ALICE, 'three')).toBe('three');
  });

  it('a failure in the middle of a large set (the second of several statements) leaves none of it stored', async () => {
    const sealer = new Sealer({ current: K1, previous: [] });
    const alice = await party('wa1.alice', sealer, true, faultyStore());
    const preKeys = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [String(i + 1), Curve.generateKeyPair()]));
    failing.arm(2);
    await expect(alice.auth.state.keys.set({ 'pre-key': preKeys, 'device-list': { x: ['1'] } })).rejects.toThrow(
      'injected write failure',
    );
    expect(await keyCount('wa1.alice')).toBe(0);
    await alice.auth.state.keys.set({ 'pre-key': preKeys });
    expect(await keyCount('wa1.alice', 'pre-key')).toBe(500);
    // Deletes and writes of one set are one transaction too.
    await alice.auth.state.keys.set({ 'pre-key': { '1': null, '2': null, '501': Curve.generateKeyPair() } });
    expect(await keyCount('wa1.alice', 'pre-key')).toBe(499);
    const got = await alice.auth.state.keys.get('pre-key', ['1', '3', '501']);
    expect(Object.keys(got).sort()).toEqual(['3', '501']);
  });

  it('a failed credentials write rejects', async () => {
    const sealer = new Sealer({ current: K1, previous: [] });
    const updates = new FailingStatement((node) => node.kind === 'UpdateQueryNode');
    const over = { ...store, db: store.db.withPlugin(updates) };
    const alice = await party('wa1.alice', sealer, true, over);
    updates.arm(1);
    await expect(alice.auth.saveCreds()).rejects.toThrow('injected write failure');
  });

  it('only the latest claimant writes: an earlier writer is refused and changes nothing', async () => {
    const sealer = new Sealer({ current: K1, previous: [] });
    const first = await party('wa1.alice', sealer, true);
    const second = await party('wa1.alice', sealer, false);
    await expect(first.auth.state.keys.set({ 'device-list': { a: ['1'] } })).rejects.toBeInstanceOf(
      StaleNetworkStateError,
    );
    await expect(first.auth.saveCreds()).rejects.toBeInstanceOf(StaleNetworkStateError);
    expect(await keyCount('wa1.alice')).toBe(0);
    await second.auth.state.keys.set({ 'device-list': { a: ['1'] } });
    expect(await second.auth.state.keys.get('device-list', ['a'])).toEqual({ a: ['1'] });
  });

  it('concurrent claims (from two store handles on PostgreSQL, as two nodes would): only the latest writes', async () => {
    // SQLite has one node and one handle (docs/internals.md, Clusters); PostgreSQL is shared by processes.
    const other =
      storeKind === 'postgres' ? openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir }) : store;
    if (other !== store) extraStores.push(other);
    const sealer = new Sealer({ current: K1, previous: [] });
    await party('wa1.alice', sealer, true);
    const writers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        stateStore(i % 2 === 0 ? store : other).claim('wa1.alice', { create: false }),
      ),
    );
    const outcomes = await Promise.allSettled(
      writers.map((w) => w!.write({ keys: [{ kind: 'k', id: 'x', value: Buffer.of(1) }] })),
    );
    // Exactly one claim is the latest, and only it may write.
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(StaleNetworkStateError);
  });

  it('discarding a session deletes its rows and fences off its writer', async () => {
    const sealer = new Sealer({ current: K1, previous: [] });
    const writer = await stateStore().claim('wa1.alice', { create: true });
    const auth = await loadSessionAuth(writer!, sealer, { fresh: true });
    await auth.state.keys.set({ 'device-list': { a: ['1'] } });
    await writer!.recordSent('m1', Buffer.of(1), 1);
    await stateStore().discard('wa1.alice');
    for (const table of ['network_auth', 'network_auth_keys', 'network_sent'] as const) {
      expect(await store.db.selectFrom(table).selectAll().execute()).toEqual([]);
    }
    await expect(auth.saveCreds()).rejects.toBeInstanceOf(StaleNetworkStateError);
    expect(await stateStore().claim('wa1.alice', { create: false })).toBeNull();
  });

  describe('tampered rows are refused', () => {
    async function tamper(session: string, kind: string, id: string): Promise<void> {
      const row = await store.db
        .selectFrom('network_auth_keys')
        .select('value')
        .where('session_id', '=', session)
        .where('kind', '=', kind)
        .where('key_id', '=', id)
        .executeTakeFirstOrThrow();
      const value = Buffer.from(row.value);
      value[value.length - 3] = value[value.length - 3]! ^ 0xff;
      await store.db
        .updateTable('network_auth_keys')
        .set({ value })
        .where('session_id', '=', session)
        .where('kind', '=', kind)
        .where('key_id', '=', id)
        .execute();
    }

    it('a changed key value, a key copied to another id, and changed credentials', async () => {
      const sealer = new Sealer({ current: K1, previous: [] });
      const alice = await party('wa1.alice', sealer, true);
      await alice.auth.state.keys.set({ 'device-list': { a: ['1'], b: ['2'] } });
      await tamper('wa1.alice', 'device-list', 'a');
      await expect(alice.auth.state.keys.get('device-list', ['a'])).rejects.toBeInstanceOf(UnreadableStateError);
      expect(await alice.auth.state.keys.get('device-list', ['b'])).toEqual({ b: ['2'] });

      // A valid sealed value moved to another row is refused as well.
      const b = await store.db
        .selectFrom('network_auth_keys')
        .select('value')
        .where('key_id', '=', 'b')
        .executeTakeFirstOrThrow();
      await store.db.updateTable('network_auth_keys').set({ value: b.value }).where('key_id', '=', 'a').execute();
      await expect(alice.auth.state.keys.get('device-list', ['a'])).rejects.toBeInstanceOf(UnreadableStateError);

      const creds = await store.db.selectFrom('network_auth').select('creds').executeTakeFirstOrThrow();
      const changed = Buffer.from(creds.creds!);
      changed[30] = changed[30]! ^ 0x01;
      await store.db.updateTable('network_auth').set({ creds: changed }).execute();
      const writer = await stateStore().claim('wa1.alice', { create: false });
      await expect(loadSessionAuth(writer!, sealer, { fresh: false })).rejects.toBeInstanceOf(UnreadableStateError);
    });
  });

  describe('key rotation', () => {
    it('rows under the previous key stay readable, are re-sealed under the new one, and then the old key can go', async () => {
      const old = new Sealer({ current: K1, previous: [] });
      const alice = await party('wa1.alice', old, true);
      const bob = await party('wa1.bob', old, true);
      await introduce(alice, bob, BOB);
      expect(await say(alice, bob, ALICE, BOB, 'before rotation')).toBe('before rotation');
      await alice.auth.state.keys.set({
        'device-list': Object.fromEntries(Array.from({ length: 450 }, (_, i) => [`u${i}`, [String(i)]])),
      });

      // Without the old key, the session cannot be read at all (reported as logged out by the connector).
      const newOnly = new Sealer({ current: K2, previous: [] });
      const blind = await stateStore().claim('wa1.alice', { create: false });
      await expect(loadSessionAuth(blind!, newOnly, { fresh: false })).rejects.toThrow(
        'sealed under a key that is neither GATEWAY_NETWORK_KEY nor a previous key',
      );

      const rotating = new Sealer({ current: K2, previous: [K1] });
      for (const session of ['wa1.alice', 'wa1.bob']) {
        const writer = await stateStore().claim(session, { create: false });
        const total = (await keyCount(session)) + 1;
        expect(await resealSession(writer!, rotating)).toBe(total);
        expect(await resealSession(writer!, rotating)).toBe(0);
      }
      const alice2 = await party('wa1.alice', newOnly, false);
      const bob2 = await party('wa1.bob', newOnly, false);
      expect(await say(alice2, bob2, ALICE, BOB, 'after rotation')).toBe('after rotation');
      expect(await say(bob2, alice2, BOB, ALICE, 'still fine')).toBe('still fine');
      expect(Object.keys(await alice2.auth.state.keys.get('device-list', ['u0', 'u449']))).toHaveLength(2);
    });
  });

  it('records of sent messages: stored, acked once, replaced payload keeps the ack, pruned by age', async () => {
    const writer = (await stateStore().claim('wa1.alice', { create: true }))!;
    await writer.recordSent('m1', Buffer.from('p1'), 1_000);
    await writer.recordSent('m2', Buffer.from('p2'), 5_000);
    await writer.markSentAcked('m1', 2_000);
    await writer.markSentAcked('m1', 3_000);
    await writer.recordSent('m1', Buffer.from('p1b'), 1_000);
    expect(await writer.readSent('m1')).toEqual({ payload: Buffer.from('p1b'), ackedAt: 2_000, createdAt: 1_000 });
    expect(await writer.readSent('nope')).toBeNull();
    expect(await stateStore().pruneSent(4_000, 100)).toBe(1);
    expect(await writer.readSent('m1')).toBeNull();
    expect(await writer.readSent('m2')).not.toBeNull();
  });
});

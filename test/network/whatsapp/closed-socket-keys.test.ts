// Issue 24: a message the library decrypted on a socket that closed before its receipt could go was lost for good:
// the advanced Signal session was stored, so the copy the network offers again no longer decrypted ("Key used
// already or never filled"). The key writes of a socket whose stream has closed are refused, checked inside the
// store's transaction just before the COMMIT; the next socket decrypts the re-offered copy. Driven by the real
// Signal library and the library's own transaction layer, on the project's store (SQLite or PostgreSQL).
import { addTransactionCapability, DEFAULT_CONNECTION_CONFIG, type SignalRepositoryWithLIDStore } from 'baileys';
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
import { RefusedNetworkStateError } from '../../../src/network/state.js';
import { loadSessionAuth, type SessionAuth } from '../../../src/network/whatsapp/auth-state.js';
import { Sealer } from '../../../src/network/whatsapp/seal.js';
import { openStore, type Store } from '../../../src/store/store.js';
import { newStoreLocation, noStoreAvailable, type StoreLocation } from '../../helpers/gateway.js';
import { introduce } from './signal-parties.js';
import { WhatsAppHarness } from './harness.js';

const ALICE = '4915100000001@s.whatsapp.net';
const BOB = '4915100000002@s.whatsapp.net';
const logger = pino({ level: 'silent' });
const sealer = new Sealer({ current: Buffer.alloc(32, 0x11), previous: [] });

/** Runs `act` at the first insert into the key table while armed: the stream closes while a key write is under way. */
class DuringKeyWrite implements KyselyPlugin {
  act: (() => void) | null = null;
  /** Only an insert writing a key of this kind, when set. */
  kind: string | null = null;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (
      this.act !== null &&
      node.kind === 'InsertQueryNode' &&
      JSON.stringify(node.into).includes('network_auth_keys') &&
      (this.kind === null || JSON.stringify(node.values).includes(JSON.stringify(this.kind)))
    ) {
      const act = this.act;
      this.act = null;
      act();
    }
    return node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

interface Socketed {
  readonly auth: SessionAuth;
  readonly repo: SignalRepositoryWithLIDStore;
}

describe.skipIf(noStoreAvailable)('key writes of a closed socket', () => {
  let location: StoreLocation;
  let store: Store;
  let during: DuringKeyWrite;

  /** One socket of a session: the library's transaction layer (with its commit retries) over the socket's keys. */
  async function socketOf(session: string, fresh: boolean, live: () => boolean): Promise<Socketed> {
    const over = { ...store, db: store.db.withPlugin(during) };
    const writer = await new SqlNetworkStateStore(over, systemClock).claim(session, { create: fresh });
    if (writer === null) throw new Error(`no session ${session}`);
    const auth = await loadSessionAuth(writer, sealer, { fresh });
    const state = auth.forSocket(live);
    const keys = addTransactionCapability(state.keys, logger, { maxCommitRetries: 3, delayBetweenTriesMs: 1 });
    return { auth, repo: DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: state.creds, keys }, logger) };
  }

  async function sessionRows(session: string): Promise<string[]> {
    const rows = await store.db
      .selectFrom('network_auth_keys')
      .select(['kind', 'key_id', 'value'])
      .where('session_id', '=', session)
      .orderBy('kind')
      .orderBy('key_id')
      .execute();
    return rows.map((r) => `${r.kind}/${r.key_id}/${Buffer.from(r.value).toString('base64')}`);
  }

  beforeEach(async () => {
    location = await newStoreLocation();
    store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    await store.migrate();
    during = new DuringKeyWrite();
  });
  afterEach(async () => {
    await store.close();
    await location.drop();
  });

  it('a decrypt whose socket closes before the commit stores nothing; the next socket decrypts the same copy', async () => {
    const alice = await socketOf('wa1.alice', true, () => true);
    let bobOpen = true;
    const bob = await socketOf('wa1.bob', true, () => bobOpen);
    // Bob publishes a one-time pre-key; Alice starts a session from his bundle; one message each way.
    await introduce(alice, bob, BOB);
    const say = async (from: Socketed, to: Socketed, fromJid: string, toJid: string, text: string) => {
      const sealed = await from.repo.encryptMessage({ jid: toJid, data: Buffer.from(text) });
      const plain = await to.repo.decryptMessage({ jid: fromJid, type: sealed.type, ciphertext: sealed.ciphertext });
      return Buffer.from(plain).toString();
    };
    expect(await say(alice, bob, ALICE, BOB, 'one')).toBe('one');
    expect(await say(bob, alice, BOB, ALICE, 'back')).toBe('back');

    const next = await alice.repo.encryptMessage({ jid: BOB, data: Buffer.from('two') });
    expect(next.type).toBe('msg');
    const before = await sessionRows('wa1.bob');
    // The stream closes while Bob's advanced session is being written: the check before the commit sees it.
    during.act = () => {
      bobOpen = false;
    };
    await expect(
      bob.repo.decryptMessage({ jid: ALICE, type: next.type, ciphertext: next.ciphertext }),
    ).rejects.toBeInstanceOf(RefusedNetworkStateError);
    expect(during.act).toBeNull();
    expect(await sessionRows('wa1.bob')).toEqual(before);

    // The next socket of Bob's session reads the stored, un-advanced session: the copy offered again decrypts.
    const bob2 = await socketOf('wa1.bob', false, () => true);
    const again = await bob2.repo.decryptMessage({ jid: ALICE, type: next.type, ciphertext: next.ciphertext });
    expect(Buffer.from(again).toString()).toBe('two');
    expect(await sessionRows('wa1.bob')).not.toEqual(before);
    expect(await say(alice, bob2, ALICE, BOB, 'three')).toBe('three');
    expect(await say(bob2, alice, BOB, ALICE, 'four')).toBe('four');
  });

  it('a stream that closes while the COMMIT is on the wire: the advanced session is put back, the copy decrypts', async () => {
    const alice = await socketOf('wa1.alice', true, () => true);
    let bobOpen = true;
    // Armed during the key write: the liveness check before the COMMIT still sees the stream open, and the stream
    // closes right after it, while the COMMIT travels (a PostgreSQL round trip).
    let closeAfterCheck = false;
    const bob = await socketOf('wa1.bob', true, () => {
      const open = bobOpen;
      if (closeAfterCheck) {
        closeAfterCheck = false;
        bobOpen = false;
      }
      return open;
    });
    await introduce(alice, bob, BOB);
    // The first message of the session (a pre-key message): its decrypt also consumes Bob's one-time pre-key.
    const first = await alice.repo.encryptMessage({ jid: BOB, data: Buffer.from('one') });
    expect(first.type).toBe('pkmsg');
    const before = await sessionRows('wa1.bob');
    // The write that stores the advanced session (and deletes the pre-key it used).
    during.kind = 'session';
    during.act = () => {
      closeAfterCheck = true;
    };
    await expect(
      bob.repo.decryptMessage({ jid: ALICE, type: first.type, ciphertext: first.ciphertext }),
    ).rejects.toBeInstanceOf(RefusedNetworkStateError);
    expect(bobOpen).toBe(false);
    // The session and the pre-key are as they were before the decrypt: what the COMMIT wrote was put back. (Alice's
    // identity, learnt from the message, was stored by an earlier write of the decrypt, while the stream was open.)
    const ratchet = (rows: string[]) => rows.filter((row) => !row.startsWith('identity-key/'));
    expect(ratchet(await sessionRows('wa1.bob'))).toEqual(ratchet(before));
    expect(ratchet(before).map((row) => row.split('/')[0])).toEqual(['pre-key']);

    const bob2 = await socketOf('wa1.bob', false, () => true);
    const again = await bob2.repo.decryptMessage({ jid: ALICE, type: first.type, ciphertext: first.ciphertext });
    expect(Buffer.from(again).toString()).toBe('one');
    const sealed = await bob2.repo.encryptMessage({ jid: ALICE, data: Buffer.from('back') });
    const back = await alice.repo.decryptMessage({ jid: BOB, type: sealed.type, ciphertext: sealed.ciphertext });
    expect(Buffer.from(back).toString()).toBe('back');
  });

  it("the connector's sockets: key writes are stored while the stream is open, refused once it has closed", async () => {
    const harness = await WhatsAppHarness.open();
    try {
      const { socket, session } = await harness.pair();
      const stored = async () =>
        (
          await harness.store.db
            .selectFrom('network_auth_keys')
            .select('key_id')
            .where('session_id', '=', session)
            .where('kind', '=', 'tctoken')
            .execute()
        ).map((r) => r.key_id);
      const value = { token: Buffer.from('t'), timestamp: '1' };
      await socket.auth.keys.set({ tctoken: { open: value } });
      expect(await stored()).toEqual(['open']);
      socket.streamOpen = false;
      await expect(socket.auth.keys.set({ tctoken: { closed: value } })).rejects.toBeInstanceOf(
        RefusedNetworkStateError,
      );
      expect(await stored()).toEqual(['open']);
    } finally {
      await harness.close();
    }
  });
});

/**
 * A WhatsApp session's authentication state (credentials and Signal keys)
 * over the network-state port, sealed value by value.
 *
 * Owns: turning Baileys' `AuthenticationState` into sealed rows and back:
 * reading credentials (a stored session that cannot be read is an error the
 * connector reports as logged out, never a silent fresh pairing), one port
 * write (one transaction) per `keys.set()` call, and re-sealing every value
 * of a session left under a previous key after a key rotation, and refusing
 * the key writes of a socket that has closed (forSocket).
 * Must never: swallow a failed write (Baileys must see it, or the ratchet on
 * the phone and the one stored here part ways: "Bad MAC"), keep keys in
 * memory beyond one call, or write after the writer lost its claim (the port's
 * fence refuses it).
 */
import {
  BufferJSON,
  initAuthCreds,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from 'baileys';
import type { NetworkKeyChange, NetworkStateWriter } from '../state.js';
import { UnreadableStateError, type Sealer } from './seal.js';

const CREDS = { kind: 'creds', id: '' } as const;

/** Rows re-sealed per transaction after a key rotation. */
const RESEAL_BATCH = 200;

function encode(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value, BufferJSON.replacer), 'utf8');
}

function decode(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'), BufferJSON.reviver) as unknown;
  } catch {
    throw new UnreadableStateError('the value is not the JSON it was sealed as');
  }
}

export interface SessionAuth {
  readonly state: AuthenticationState;
  /**
   * The same state for one socket: its key writes are refused (RefusedNetworkStateError, nothing stored) once
   * `live` answers false, asked at the last moment before the store commits. A message the library decrypted on a
   * socket that closed before its receipt could go then leaves the session as it was, so the copy the network
   * offers again decrypts on the next socket (docs/whatsapp.md, "Nothing received is lost"). `track` is called with
   * each of the socket's key writes too, so the socket after it can wait for them (one may be undone after its
   * COMMIT: network-state.ts).
   */
  forSocket(live: () => boolean, track?: (write: Promise<void>) => Promise<void>): AuthenticationState;
  /** Seals and writes the current credentials (after every `creds.update`). */
  saveCreds(): Promise<void>;
}

export interface LoadOptions {
  /** A new pairing attempt: fresh credentials are made and stored. Otherwise missing credentials are an error. */
  readonly fresh: boolean;
  /** Called with every write started in the background (credentials and keys), so others can wait for it. */
  readonly track?: (write: Promise<void>) => Promise<void>;
}

/**
 * The auth state of the session the writer holds. Rejects with UnreadableStateError when stored
 * credentials cannot be opened, or are missing for a session that should have them.
 */
export async function loadSessionAuth(
  writer: NetworkStateWriter,
  sealer: Sealer,
  options: LoadOptions,
): Promise<SessionAuth> {
  const place = (kind: string, id: string) => ({ session: writer.session, kind, id });
  const stored = await writer.readCreds();
  let creds: AuthenticationCreds;
  if (stored === null) {
    if (!options.fresh) throw new UnreadableStateError('no credentials are stored for this session');
    creds = initAuthCreds();
    await writer.write({ creds: sealer.seal(encode(creds), place(CREDS.kind, CREDS.id)) });
  } else {
    creds = decode(sealer.open(stored, place(CREDS.kind, CREDS.id)).plain) as AuthenticationCreds;
  }

  const track = options.track ?? ((write: Promise<void>) => write);

  const keysFor = (live?: () => boolean, socketTrack?: (write: Promise<void>) => Promise<void>): SignalKeyStore => ({
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const rows = await writer.readKeys(type, ids);
      const found: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const [id, sealed] of rows) {
        let value = decode(sealer.open(sealed, place(type, id)).plain);
        if (type === 'app-state-sync-key' && value !== null && typeof value === 'object') {
          value = proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>);
        }
        found[id] = value as SignalDataTypeMap[T];
      }
      return found;
    },
    async set(data: SignalDataSet) {
      const changes: NetworkKeyChange[] = [];
      for (const [type, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          changes.push({
            kind: type,
            id,
            value: value === null || value === undefined ? null : sealer.seal(encode(value), place(type, id)),
          });
        }
      }
      if (changes.length === 0) return;
      const write = track(writer.write(live === undefined ? { keys: changes } : { keys: changes, live }));
      await (socketTrack === undefined ? write : socketTrack(write));
    },
  });

  return {
    state: { creds, keys: keysFor() },
    forSocket: (live, socketTrack) => ({ creds, keys: keysFor(live, socketTrack) }),
    saveCreds: () => track(writer.write({ creds: sealer.seal(encode(creds), place(CREDS.kind, CREDS.id)) })),
  };
}

/**
 * Seals again, under the current key, every value of the session still sealed under a previous key
 * (after GATEWAY_NETWORK_KEY was rotated): credentials, keys, records of sent messages and offers.
 * Returns how many values it rewrote. A value that cannot be opened at all stops it with
 * UnreadableStateError. Must not run while a socket of the session writes: it rewrites what it read.
 */
export async function resealSession(writer: NetworkStateWriter, sealer: Sealer): Promise<number> {
  const session = writer.session;
  let rewritten = 0;
  const stored = await writer.readCreds();
  if (stored !== null) {
    const opened = sealer.open(stored, { session, ...CREDS });
    if (!opened.current) {
      await writer.write({ creds: sealer.seal(opened.plain, { session, ...CREDS }) });
      rewritten += 1;
    }
  }
  let after: { kind: string; id: string } | null = null;
  for (;;) {
    const rows = await writer.scanKeys(after, RESEAL_BATCH);
    const changes: NetworkKeyChange[] = [];
    for (const row of rows) {
      const place = { session, kind: row.kind, id: row.id };
      const opened = sealer.open(row.value, place);
      if (!opened.current) changes.push({ kind: row.kind, id: row.id, value: sealer.seal(opened.plain, place) });
    }
    if (changes.length > 0) await writer.write({ keys: changes });
    rewritten += changes.length;
    const last = rows.at(-1);
    if (last === undefined || rows.length < RESEAL_BATCH) break;
    after = { kind: last.kind, id: last.id };
  }
  // Records of sent messages and offers: one row each, rewritten in place (the ack and the time stay).
  let sentAfter: string | null = null;
  for (;;) {
    const rows = await writer.scanSent(sentAfter, RESEAL_BATCH);
    for (const row of rows) {
      const place = { session, kind: 'sent', id: row.id };
      const opened = sealer.open(row.payload, place);
      if (opened.current) continue;
      await writer.recordSent(row.id, sealer.seal(opened.plain, place), Date.now());
      rewritten += 1;
    }
    if (rows.length < RESEAL_BATCH) break;
    sentAfter = rows.at(-1)!.id;
  }
  let offerAfter: string | null = null;
  for (;;) {
    const rows = await writer.scanOffers(offerAfter, RESEAL_BATCH);
    for (const row of rows) {
      const place = { session, kind: 'offer', id: row.chat };
      const opened = sealer.open(row.payload, place);
      if (opened.current) continue;
      await writer.recordOffer(row.chat, sealer.seal(opened.plain, place), row.createdAt);
      rewritten += 1;
    }
    if (rows.length < RESEAL_BATCH) break;
    offerAfter = rows.at(-1)!.chat;
  }
  return rewritten;
}

/**
 * A fake phone: the primary device (device 0) of one registered number, with its own Signal identity, signed
 * pre-key and one-time pre-keys, kept in memory and run through the library's own Signal repository.
 *
 * Owns: the phone's keys and sessions; encrypting to and decrypting from a linked device (1:1 and sender keys);
 * what the phone decrypted (inbox) and what it sent with the receipts that came back (sent).
 * Must never: route a stanza (routing.ts does) or touch a WebSocket.
 */
import {
  Curve,
  DEFAULT_CONNECTION_CONFIG,
  addTransactionCapability,
  encodeWAMessage,
  initAuthCreds,
  proto,
  unpadRandomMax16,
  type AuthenticationCreds,
  type KeyPair,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from 'baileys';
import pino from 'pino';
import type { ContentDetails } from './content-details.js';
import { shareTransactionStorage, type TransactionalKeys } from '../src/network/whatsapp/transaction-storage.js';

const silent = pino({ level: 'silent' });
const ONE_TIME_PRE_KEYS = 30;

export interface Bundle {
  readonly registrationId: number;
  readonly identityKey: Buffer;
  readonly signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer };
  readonly preKey?: { keyId: number; publicKey: Buffer };
}

export interface InboxEntry {
  id: string;
  from: string;
  type: string;
  text?: string;
  media_sha256?: string;
  group?: string;
  /** A reply: the message it quotes (its id) and whom the quote names as its author, as the device wrote them. */
  quoted?: { id: string; participant: string };
  /** Set when it came as view-once media. */
  view_once?: true;
  /** The JIDs its context mentions, when any. */
  mentions?: string[];
  /** A voice note, contact cards, a poll, a link preview: as content-details.ts reads them. */
  ptt?: true;
  contacts?: ContentDetails['contacts'];
  poll?: ContentDetails['poll'];
  link_preview?: ContentDetails['link_preview'];
  /** Reactions, edits and deletes for everyone: the message acted on, the emoji, the new text. */
  target_id?: string;
  emoji?: string;
  edited_text?: string;
  forwarded?: true;
  received_at: string;
}

export interface SentEntry {
  id: string;
  to: string;
  text?: string;
  delivered_at?: string;
  read_at?: string;
  /** The error code of a linked device's negative acknowledgement (it refused the message), if any. */
  nack?: string;
}

/** A Signal key store in memory, in the shape the library's repository expects. */
function memoryKeys(): SignalKeyStore {
  const data = new Map<string, unknown>();
  return {
    get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const value = data.get(`${type}/${id}`);
        if (value !== undefined) out[id] = value as SignalDataTypeMap[T];
      }
      return out;
    },
    set: async (set: SignalDataSet) => {
      for (const [type, values] of Object.entries(set)) {
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value === null || value === undefined) data.delete(`${type}/${id}`);
          else data.set(`${type}/${id}`, value);
        }
      }
    },
  };
}

function keptInSharedStorage<T extends TransactionalKeys>(keys: T): T {
  shareTransactionStorage(keys);
  return keys;
}

export class Phone {
  readonly creds: AuthenticationCreds = initAuthCreds();
  // Kept in one shared AsyncLocalStorage, as the gateway keeps its sockets' (transaction-storage.ts): a storage per
  // phone would make every promise of the stand-in dearer with each phone.
  readonly keys = keptInSharedStorage(
    addTransactionCapability(memoryKeys(), silent, { maxCommitRetries: 1, delayBetweenTriesMs: 10 }),
  );
  readonly repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: this.creds, keys: this.keys }, silent);
  readonly inbox: InboxEntry[] = [];
  readonly sent: SentEntry[] = [];
  /** The secrets of the polls the phone received, by message id: its votes on them are sealed with them (votes.ts). */
  readonly pollSecrets = new Map<string, Uint8Array>();
  private readonly freePreKeys: number[] = [];
  private ready: Promise<void>;

  constructor(
    readonly phone: string,
    readonly lid: string,
  ) {
    this.ready = this.makePreKeys();
  }

  /** The phone's own address as the library writes it for a LID-addressed account (device 0). */
  get lidJid(): string {
    return `${this.lid}@lid`;
  }

  get pnJid(): string {
    return `${this.phone}@s.whatsapp.net`;
  }

  private async makePreKeys(): Promise<void> {
    const set: { [id: string]: KeyPair } = {};
    for (let id = 1; id <= ONE_TIME_PRE_KEYS; id++) {
      set[String(id)] = Curve.generateKeyPair();
      this.freePreKeys.push(id);
    }
    await this.keys.set({ 'pre-key': set });
  }

  /** The phone's pre-key bundle; each one-time pre-key is handed out once, then only the signed pre-key. */
  async bundle(): Promise<Bundle> {
    await this.ready;
    const id = this.freePreKeys.shift();
    const base = {
      registrationId: this.creds.registrationId,
      identityKey: Buffer.from(this.creds.signedIdentityKey.public),
      signedPreKey: {
        keyId: this.creds.signedPreKey.keyId,
        publicKey: Buffer.from(this.creds.signedPreKey.keyPair.public),
        signature: Buffer.from(this.creds.signedPreKey.signature),
      },
    };
    if (id === undefined) return base;
    const { [String(id)]: pair } = await this.keys.get('pre-key', [String(id)]);
    return pair === undefined ? base : { ...base, preKey: { keyId: id, publicKey: Buffer.from(pair.public) } };
  }

  /** Encrypts a message to one device; `bundle` is asked only when there is no session with it yet. */
  async encrypt(jid: string, message: proto.IMessage, bundle: () => Promise<Bundle>) {
    await this.ready;
    if (!(await this.repository.validateSession(jid)).exists) {
      const b = await bundle();
      await this.repository.injectE2ESession({
        jid,
        session: {
          registrationId: b.registrationId,
          identityKey: withType(b.identityKey),
          signedPreKey: { ...b.signedPreKey, publicKey: withType(b.signedPreKey.publicKey) },
          ...(b.preKey === undefined ? {} : { preKey: { ...b.preKey, publicKey: withType(b.preKey.publicKey) } }),
        },
      });
    }
    return this.repository.encryptMessage({ jid, data: encodeWAMessage(message) });
  }

  async decrypt(jid: string, type: 'pkmsg' | 'msg', ciphertext: Uint8Array): Promise<proto.Message> {
    await this.ready;
    const plain = await this.repository.decryptMessage({ jid, type, ciphertext });
    return proto.Message.decode(unpadRandomMax16(plain));
  }

  async decryptGroup(group: string, author: string, ciphertext: Uint8Array): Promise<proto.Message> {
    const plain = await this.repository.decryptGroupMessage({ group, authorJid: author, msg: ciphertext });
    return proto.Message.decode(unpadRandomMax16(plain));
  }

  async acceptSenderKey(author: string, item: proto.Message.ISenderKeyDistributionMessage): Promise<void> {
    await this.repository.processSenderKeyDistributionMessage({ item, authorJid: author });
  }

  /** Sender-key encryption for a group, from the phone's LID: the ciphertext and the distribution message. */
  async encryptGroup(group: string, message: proto.IMessage) {
    await this.ready;
    return this.repository.encryptGroupMessage({ group, meId: this.lidJid, data: encodeWAMessage(message) });
  }
}

/** libsignal wants public keys with the 0x05 type byte; the wire and the stand-in keep them without. */
function withType(key: Buffer): Buffer {
  return key.length === 33 ? key : Buffer.concat([Buffer.from([5]), key]);
}

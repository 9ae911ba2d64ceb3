/**
 * Everything the stand-in knows: registered numbers (each with its fake phone and its linked devices), groups,
 * pairing requests in flight, fault settings and counters.
 *
 * Owns: the addressing rules (a number's LID, device JIDs in both forms, resolving any JID to a device) and the
 * lookups the protocol handlers share.
 * Must never: speak the protocol itself (stream.ts and its handlers do) or keep anything on disk: the stand-in is
 * fresh at every start, like a test fixture.
 */
import { createHash } from 'node:crypto';
import { jidDecode, type BinaryNode, type proto } from 'baileys';
import type { HistorySpec } from './history.js';
import { Phone, type Bundle } from './phone.js';

/** What a linked device (a companion, such as the gateway) registered: enough to build its pre-key bundle. */
export interface Companion {
  readonly account: Account;
  readonly device: number;
  readonly noiseKey: Buffer;
  registrationId: number;
  identityKey: Buffer;
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer };
  preKeys: Map<number, Buffer>;
  /** Its open stream, when connected and logged in. */
  stream?: DeviceStream;
  /** Stanzas for it while it is offline, delivered at its next login. */
  readonly pending: BinaryNode[];
  /**
   * Messages handed to its open stream that it has not receipted yet, by id, in the order sent: when the stream
   * ends first they go back to the front of `pending` and are offered again at the next login, as WhatsApp does.
   */
  readonly unreceipted: Map<string, BinaryNode>;
  /** Ids it answered with a retry receipt: its refusal (a nack) that follows is not the end of the message. */
  readonly retrying: Set<string>;
  /** Set when the phone removed it: its next login ends with 401 device_removed. */
  removed: boolean;
  /** Whether the phone sent it the short history sync (after its first login). */
  historySent: boolean;
}

/** What routing needs from a connected stream. */
export interface DeviceStream {
  send(node: BinaryNode): void;
  end(code?: number, reason?: string): void;
}

export interface Account {
  readonly phone: string;
  readonly lid: string;
  readonly primary: Phone;
  readonly companions: Map<number, Companion>;
  nextDevice: number;
  /** The history its phone offers a device at its first login (history.ts; `POST /control/phones/{phone}/history`). */
  history?: HistorySpec;
}

export interface Group {
  readonly id: string;
  subject: string;
  readonly creator: string;
  readonly creation: number;
  readonly participants: string[];
}

export interface Faults {
  ack_delay_ms?: number;
  receipt_delay_ms?: number;
  drop_acks?: boolean;
  restart_loop?: boolean;
  slow_upload_ms?: number;
}

/** One device, resolved from a JID: the fake phone (device 0) or a companion. */
export type Target = { kind: 'phone'; account: Account } | { kind: 'companion'; companion: Companion };

export class World {
  readonly accounts = new Map<string, Account>();
  private readonly byLid = new Map<string, Account>();
  readonly groups = new Map<string, Group>();
  readonly faults: Faults = {};
  readonly stats = { logins: 0, streams_open: 0, reoffered: 0, refused: 0, uploads: 0, group_queries: 0 };
  /**
   * What phones sent to linked devices in 1:1 chats, by `<phone>/<id>`: sent again, newly encrypted, when a device
   * answers with a retry receipt (it could not decrypt it), as a phone does. Forgotten after MAX_RESENDS.
   */
  readonly resendable = new Map<string, { message: proto.IMessage; attrs: Record<string, string>; resends: number }>();
  /** Messages linked devices sent to phones, by `<phone>/<id>`: where a read receipt for them goes. */
  readonly readable = new Map<string, { sender: Companion; chat: string; group: string | undefined }>();

  /** The account of a number, made on first mention with its own phone and keys. */
  account(phone: string): Account {
    let account = this.accounts.get(phone);
    if (account === undefined) {
      // A stable, distinct LID per number: real LIDs are opaque numbers unrelated to the phone number.
      const digest = createHash('sha256').update(`lid:${phone}`).digest();
      const lid = String(100_000_000_000_000n + (digest.readBigUInt64BE(0) % 800_000_000_000_000n));
      account = { phone, lid, primary: new Phone(phone, lid), companions: new Map(), nextDevice: 2 };
      this.accounts.set(phone, account);
      this.byLid.set(lid, account);
    }
    return account;
  }

  /** The account of a number or LID user in any JID form; undefined for unknown LIDs and non-user JIDs. */
  accountOf(jid: string): Account | undefined {
    const decoded = jidDecode(jid);
    if (decoded === undefined) return undefined;
    if (decoded.server === 'lid') return this.byLid.get(decoded.user);
    if (decoded.server === 's.whatsapp.net' || decoded.server === 'c.us') return this.account(decoded.user);
    return undefined;
  }

  target(jid: string): Target | undefined {
    const account = this.accountOf(jid);
    if (account === undefined) return undefined;
    const device = jidDecode(jid)?.device ?? 0;
    if (device === 0) return { kind: 'phone', account };
    const companion = account.companions.get(device);
    return companion === undefined || companion.removed ? undefined : { kind: 'companion', companion };
  }

  /** Every live device of an account: the phone first, then its linked devices. */
  devices(account: Account): Target[] {
    const out: Target[] = [{ kind: 'phone', account }];
    for (const companion of account.companions.values())
      if (!companion.removed) out.push({ kind: 'companion', companion });
    return out;
  }

  companionBundle(companion: Companion): Bundle {
    const first = companion.preKeys.entries().next();
    const base = {
      registrationId: companion.registrationId,
      identityKey: companion.identityKey,
      signedPreKey: companion.signedPreKey,
    };
    if (first.done === true) return base;
    const [keyId, publicKey] = first.value;
    companion.preKeys.delete(keyId);
    return { ...base, preKey: { keyId, publicKey } };
  }

  async bundleOf(target: Target): Promise<Bundle> {
    return target.kind === 'phone' ? target.account.primary.bundle() : this.companionBundle(target.companion);
  }

  /** Hands a stanza to a companion now, or keeps it for its next login; a message is kept until receipted. */
  deliver(companion: Companion, node: BinaryNode): void {
    if (companion.stream === undefined) {
      companion.pending.push(node);
      return;
    }
    if (node.tag === 'message' && node.attrs.id !== undefined) companion.unreceipted.set(node.attrs.id, node);
    companion.stream.send(node);
  }

  /** The companion receipted (or acknowledged) these messages: they are its now and are never offered again. */
  receipted(companion: Companion, ids: readonly string[]): void {
    for (const id of ids) companion.unreceipted.delete(id);
  }

  /**
   * The companion acknowledged a message with an error: refused (a copy it had decrypted before, or one it cannot
   * read), so it is not offered again, unless its retry receipt came first and the phone is sending it again.
   */
  refused(companion: Companion, id: string): void {
    if (companion.retrying.delete(id)) return;
    companion.unreceipted.delete(id);
    this.stats.refused++;
  }

  /** Messages offered to linked devices and not receipted yet, waiting for a login or in flight on a stream. */
  waitingMessages(): number {
    let waiting = 0;
    for (const account of this.accounts.values())
      for (const companion of account.companions.values()) {
        if (companion.removed) continue;
        waiting += companion.unreceipted.size + companion.pending.filter((n) => n.tag === 'message').length;
      }
    return waiting;
  }

  /** Its stream ended: what it had not receipted goes back to the front of its queue, in the order first sent. */
  requeueUnreceipted(companion: Companion): void {
    if (companion.unreceipted.size === 0) return;
    this.stats.reoffered += companion.unreceipted.size;
    companion.pending.unshift(...companion.unreceipted.values());
    companion.unreceipted.clear();
  }
}

export function lidDeviceJid(account: Account, device: number): string {
  return device === 0 ? `${account.lid}@lid` : `${account.lid}:${device}@lid`;
}

export function pnDeviceJid(account: Account, device: number): string {
  return device === 0 ? `${account.phone}@s.whatsapp.net` : `${account.phone}:${device}@s.whatsapp.net`;
}

export function targetDevice(target: Target): { account: Account; device: number } {
  return target.kind === 'phone'
    ? { account: target.account, device: 0 }
    : { account: target.companion.account, device: target.companion.device };
}

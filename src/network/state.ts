/**
 * The persistence port of a network: durable state a network keeps per
 * session (credentials, keys, records of what it sent), as opaque bytes.
 *
 * Owns: the contract between a network implementation and whoever stores its
 * state. The gateway implements it over its store (src/devices/network-state.ts);
 * a network seals what it writes and never learns where it lives.
 * Must never: carry gateway concepts (devices, accounts) or plaintext secrets;
 * the values are sealed by the network before they get here.
 */

/** A write presented a fence that is no longer the session's: another connection has claimed it, or it was discarded. */
export class StaleNetworkStateError extends Error {
  constructor(session: string) {
    super(`network state of session ${session} is held by another connection (or was discarded)`);
    this.name = 'StaleNetworkStateError';
  }
}

/**
 * A write refused because the connection that made it is no longer live (its socket closed): nothing was written.
 * The network must not go on as if it had been (docs/whatsapp.md, "Nothing received is lost").
 */
export class RefusedNetworkStateError extends Error {
  constructor(session: string) {
    super(`network state of session ${session} not written: the connection that wrote it has closed`);
    this.name = 'RefusedNetworkStateError';
  }
}

export interface NetworkKeyChange {
  readonly kind: string;
  readonly id: string;
  /** Null deletes the key. */
  readonly value: Uint8Array | null;
}

export interface NetworkKeyRow {
  readonly kind: string;
  readonly id: string;
  readonly value: Uint8Array;
}

export interface NetworkSentRecord {
  readonly payload: Uint8Array;
  readonly ackedAt: number | null;
  readonly createdAt: number;
}

/** What a session last offered in one chat (e.g. the choices of a list sent as text), sealed. */
export interface NetworkOffer {
  readonly chat: string;
  readonly payload: Uint8Array;
  readonly createdAt: number;
}

export interface NetworkStateChanges {
  readonly creds?: Uint8Array;
  readonly keys?: readonly NetworkKeyChange[];
  /** Whether the connection making the write still stands; checked at the last moment before the commit. */
  readonly live?: () => boolean;
}

/** The single writer of one session, from `claim` until another claim or `discard`. */
export interface NetworkStateWriter {
  readonly session: string;
  /** The sealed credentials, or null when none were written yet. */
  readCreds(): Promise<Uint8Array | null>;
  /** The keys of one kind that exist among `ids`. */
  readKeys(kind: string, ids: readonly string[]): Promise<Map<string, Uint8Array>>;
  /** Every key of the session in (kind, id) order after the given position, at most `limit` (for re-sealing). */
  scanKeys(after: { kind: string; id: string } | null, limit: number): Promise<NetworkKeyRow[]>;
  /**
   * Writes credentials and key changes as one transaction: all or nothing.
   * Rejects with StaleNetworkStateError when another writer claimed the session since (nothing is written).
   * With `live`, asks it as the last step before the commit (in the same synchronous step as the COMMIT where the
   * store's driver allows it) and rejects with RefusedNetworkStateError, nothing written, when it answers false.
   */
  write(changes: NetworkStateChanges): Promise<void>;
  /** Records a sent message (sealed payload); writing the same id again replaces the payload, keeps the ack. */
  recordSent(messageId: string, payload: Uint8Array, at: number): Promise<void>;
  markSentAcked(messageId: string, at: number): Promise<void>;
  readSent(messageId: string): Promise<NetworkSentRecord | null>;
  /** Records of sent messages in id order after the given id, at most `limit` (for re-sealing). */
  scanSent(after: string | null, limit: number): Promise<Array<{ readonly id: string; readonly payload: Uint8Array }>>;
  /**
   * Records what was offered in a chat, replacing the chat's earlier offer (one per chat).
   * Rejects with StaleNetworkStateError when another writer claimed the session since.
   */
  recordOffer(chat: string, payload: Uint8Array, at: number): Promise<void>;
  /** The chat's offer if it was made at or after `since` (ms), else null. */
  readOffer(chat: string, since: number): Promise<NetworkOffer | null>;
  /** Offers in chat order after the given chat, at most `limit` (for re-sealing). */
  scanOffers(after: string | null, limit: number): Promise<NetworkOffer[]>;
}

export interface NetworkStateStore {
  /**
   * Takes the single-writer right for a session, fencing off every earlier writer of it.
   * With `create`, a session that does not exist is created empty; without, null means it does not exist.
   */
  claim(session: string, options: { readonly create: boolean }): Promise<NetworkStateWriter | null>;
  /** Forgets everything stored under the session; writers of it are fenced off. */
  discard(session: string): Promise<void>;
  /** Deletes records of sent messages older than `before` (ms), at most `limit`; returns how many. */
  pruneSent(before: number, limit: number): Promise<number>;
  /** Deletes offers made before `before` (ms), at most `limit`; returns how many. */
  pruneOffers(before: number, limit: number): Promise<number>;
}

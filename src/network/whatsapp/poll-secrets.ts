/**
 * The secrets of the polls a session sends (docs/whatsapp.md, Polls). A vote on a poll comes encrypted with a
 * key derived from the poll's message secret, so the secret must outlive the send: it is kept, sealed, in the
 * session's own key store (kind `poll-secret`, by the poll's network id) BEFORE the poll leaves, and a retry of
 * the same send takes the one kept instead of making another. Keys are kept as long as the session (they are not
 * pruned like the records of sent messages) and re-sealed with the rest when the sealing key changes.
 *
 * The secret of a poll received from a phone (a member's poll in a group) is kept the same way when it arrives, so
 * the votes others cast on it can be read too.
 *
 * Owns: making, keeping and reading a poll's secret.
 * Must never: send a poll whose secret is not stored (the caller sends only after keepPollSecret resolved), or
 * keep a secret unsealed.
 */
import { randomBytes } from 'node:crypto';
import type { NetworkStateWriter } from '../state.js';
import type { Sealer } from './seal.js';

/** The key-store kind the secrets are kept under. */
export const POLL_SECRET_KIND = 'poll-secret';
/** WhatsApp's message secrets are 32 bytes. */
const SECRET_BYTES = 32;

export interface PollSecretPlace {
  readonly writer: NetworkStateWriter;
  readonly sealer: Sealer;
  readonly session: string;
}

/** The secret kept for the poll `networkId`, or null when none was. */
export async function readPollSecret(at: PollSecretPlace, networkId: string): Promise<Uint8Array | null> {
  const found = (await at.writer.readKeys(POLL_SECRET_KIND, [networkId])).get(networkId);
  if (found === undefined) return null;
  // A copy of its own: the opened bytes may be a view of a larger buffer.
  return new Uint8Array(at.sealer.open(found, { session: at.session, kind: POLL_SECRET_KIND, id: networkId }).plain);
}

/**
 * Keeps the secret a poll received from someone else carried (its votes are sealed with it), unless one is kept for
 * `networkId` already (a poll is never re-keyed by a repeat of it).
 */
export async function keepReceivedPollSecret(at: PollSecretPlace, networkId: string, secret: Uint8Array) {
  if ((await readPollSecret(at, networkId)) !== null) return;
  const place = { session: at.session, kind: POLL_SECRET_KIND, id: networkId };
  await at.writer.write({ keys: [{ kind: POLL_SECRET_KIND, id: networkId, value: at.sealer.seal(secret, place) }] });
}

/** The poll's secret: the one already kept for `networkId` (a retry), else a new one, kept before it is answered. */
export async function keepPollSecret(at: PollSecretPlace, networkId: string): Promise<Uint8Array> {
  const kept = await readPollSecret(at, networkId);
  if (kept !== null) return kept;
  const secret = new Uint8Array(randomBytes(SECRET_BYTES));
  const place = { session: at.session, kind: POLL_SECRET_KIND, id: networkId };
  await at.writer.write({ keys: [{ kind: POLL_SECRET_KIND, id: networkId, value: at.sealer.seal(secret, place) }] });
  return secret;
}

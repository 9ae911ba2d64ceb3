/**
 * The history sync at pairing, as the network seam tells it (DECISIONS 16; docs/api.md, History sync): the messages
 * a phone offers its newly linked device from its earlier conversations, and the end of that offer.
 *
 * Owns: the shape of a history message and of the two events that carry them, and the rule every network and the
 * gateway share for the days limit (`withinHistory`).
 * Must never: import anything but the seam's values, or hold behaviour beyond that rule. A network hands history
 * over in bounded batches, the next one only after the gateway has taken the last (`taken`): never all at once.
 */
import type { IncomingContent } from './incoming-content.js';
import type { NetworkGroupId, PhoneNumber } from './values.js';

/** One message of the phone's history: one this number sent (`fromMe`) or one it received. */
export interface HistoryMessage {
  /** The network's id of the message (for one this number sent, the id it was sent with). */
  readonly id: string;
  readonly fromMe: boolean;
  /** The chat it is in: the other person's number (on WhatsApp maybe its LID form, `12345@lid`), or a group's id. */
  readonly chat: PhoneNumber | NetworkGroupId;
  /** Who wrote it, when someone else did: a number, or on WhatsApp the LID form while no number is known. */
  readonly from?: PhoneNumber;
  /** The sender's LID (`12345@lid`) when the network named one. */
  readonly fromLid?: string;
  /** Its content; media is described only (history media is not downloaded: docs/api.md, History sync). */
  readonly content: IncomingContent;
  /** When it was sent. */
  readonly at: Date;
}

/**
 * The history events of the seam. `history_messages`: a batch (at most HISTORY_BATCH messages, only those within
 * the days limit the network was given); the network sends no further batch of the connection until `taken()` was
 * called (once the gateway stored it, or decided not to). `history_synced`: the phone has offered everything it
 * will; once per history sync, after its last batch.
 */
export type HistoryEvent =
  | {
      readonly type: 'history_messages';
      readonly messages: ReadonlyArray<HistoryMessage>;
      readonly taken: () => void;
    }
  | { readonly type: 'history_synced' };

/** Messages in one `history_messages` event at most. */
export const HISTORY_BATCH = 500;

/** Whether a message sent at `at` (ms) is within the last `days` days at `now` (ms); the boundary itself is in. */
export function withinHistory(at: number, days: number, now: number): boolean {
  return days > 0 && at >= now - days * 86_400_000;
}

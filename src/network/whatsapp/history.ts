/**
 * The history sync at pairing on WhatsApp (DECISIONS 16; docs/whatsapp.md, History sync): the phone sends its new
 * device an INITIAL_BOOTSTRAP chunk and RECENT chunks of its recent conversations (the socket asks for those two
 * only, never the full history: socket-port.ts); the library decodes each chunk and hands it over as one
 * `messaging-history.set`.
 *
 * Owns: turning a chunk's messages into the seam's history messages (those sent within the days limit, media
 * described but not kept for download), and handing them to the gateway in batches of HISTORY_BATCH, the next one
 * only once the gateway took the last: what waits meanwhile is the compact seam form, never the library's messages.
 * The end: the RECENT chunk with progress 100, or the library's word that the RECENT sync paused (no chunk for two
 * minutes), and then no chunk for SETTLE_MS (the library decodes chunks concurrently, so they may be handed over out
 * of order); then `history_synced`, once per connection.
 * Must never: hold a library message after its chunk is read, pass on a status broadcast, a newsletter or a message
 * without content, or tell the end before the batches before it were taken.
 */
import {
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  proto,
  type BaileysEventMap,
  type WAMessage,
} from 'baileys';
import {
  HISTORY_BATCH,
  withinHistory,
  type HistoryMessage,
  type IncomingContent,
  type NetworkEvent,
} from '../network.js';
import { incomingContent, translateIncoming } from './incoming.js';
import { lidOf } from './lid.js';
import { senderPhone } from './numbers.js';

const SYNC = proto.HistorySync.HistorySyncType;
/** How long after the last chunk of a completed sync its end is told (see awaitSettled). */
export const SETTLE_MS = 3_000;

function sentAt(message: WAMessage): number | null {
  const t = message.messageTimestamp;
  const seconds = typeof t === 'number' ? t : t === null || t === undefined ? NaN : Number(t.toString());
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null;
}

/** The content without what a download needs: history media is not downloaded (docs/whatsapp.md, History sync). */
function described(content: IncomingContent): IncomingContent {
  if (!('media' in content)) return content;
  const { media: _notKept, ...rest } = content;
  return rest as IncomingContent;
}

/** A message of a history chunk in the seam's form, or null when it is not one for the gateway. */
export function historyMessageOf(message: WAMessage): HistoryMessage | null {
  const key = message.key;
  const chat = key?.remoteJid ?? undefined;
  if (key === null || key === undefined || typeof key.id !== 'string' || chat === undefined) return null;
  if (isJidStatusBroadcast(chat) || isJidNewsletter(chat)) return null;
  const at = sentAt(message);
  if (at === null || message.message === null || message.message === undefined) return null;
  if (key.fromMe !== true) {
    const incoming = translateIncoming(message);
    if (typeof incoming === 'string') return null;
    return {
      id: incoming.id,
      fromMe: false,
      chat: incoming.group ?? incoming.from,
      from: incoming.from,
      ...(incoming.fromLid === undefined ? {} : { fromLid: incoming.fromLid }),
      content: described(incoming.content),
      at: new Date(at),
    };
  }
  const content = incomingContent(message);
  // A one-to-one chat by its number, or by the LID form while no number is known for it.
  const to = isJidGroup(chat) === true ? chat : (senderPhone(chat, key.remoteJidAlt) ?? lidOf(chat));
  if (content === null || to === null) return null;
  return { id: key.id, fromMe: true, chat: to, content: described(content), at: new Date(at) };
}

/** One connection's history sync: what is still to be handed over, and whether the end was heard and told. */
export class HistoryIntake {
  private readonly waiting: HistoryMessage[] = [];
  /** A batch is with the gateway and not yet taken. */
  private out = false;
  /** The phone said the sync is complete (or the library that it paused). */
  private ended = false;
  /** No chunk came for SETTLE_MS since the end was heard: chunks still being decoded have been handed over. */
  private settled = false;
  private settle: NodeJS.Timeout | null = null;
  private told = false;

  constructor(
    /** `GATEWAY_HISTORY_DAYS`: 0 takes nothing (the socket then asks for no history). */
    private readonly days: number,
    private readonly emit: (event: NetworkEvent) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** The library's handlers for the history events. */
  handlers(): {
    'messaging-history.set': (set: BaileysEventMap['messaging-history.set']) => void;
    'messaging-history.status': (status: BaileysEventMap['messaging-history.status']) => void;
  } {
    return {
      'messaging-history.set': (set) => this.onSet(set),
      'messaging-history.status': (status) => this.onStatus(status),
    };
  }

  onSet({ messages, syncType, progress }: BaileysEventMap['messaging-history.set']): void {
    if (this.days === 0 || this.told) return;
    if (syncType !== SYNC.INITIAL_BOOTSTRAP && syncType !== SYNC.RECENT) return;
    const now = this.now();
    for (const message of messages) {
      const kept = historyMessageOf(message);
      if (kept !== null && withinHistory(kept.at.getTime(), this.days, now)) this.waiting.push(kept);
    }
    if (syncType === SYNC.RECENT && progress === 100) this.ended = true;
    this.awaitSettled();
    this.pump();
  }

  onStatus({ syncType, status }: BaileysEventMap['messaging-history.status']): void {
    if (this.days === 0 || syncType !== SYNC.RECENT || status !== 'paused') return;
    this.ended = true;
    this.awaitSettled();
  }

  /**
   * The library decodes chunks concurrently, so the last chunk may be handed over before one sent earlier: the end
   * is told only once no chunk came for SETTLE_MS after it (and every batch before it was taken).
   */
  private awaitSettled(): void {
    if (!this.ended || this.told) return;
    if (this.settle !== null) clearTimeout(this.settle);
    this.settle = setTimeout(() => {
      this.settle = null;
      this.settled = true;
      this.pump();
    }, SETTLE_MS);
    this.settle.unref();
  }

  /** How many messages wait to be handed over (for tests and logs). */
  get held(): number {
    return this.waiting.length;
  }

  private pump(): void {
    if (this.out) return;
    if (this.waiting.length > 0) {
      const messages = this.waiting.splice(0, HISTORY_BATCH);
      this.out = true;
      let taken = false;
      this.emit({
        type: 'history_messages',
        messages,
        taken: () => {
          if (taken) return;
          taken = true;
          this.out = false;
          // The next batch leaves on a later turn: a gateway that takes at once never recurses.
          setImmediate(() => this.pump());
        },
      });
      return;
    }
    if (this.settled && !this.told) {
      this.told = true;
      this.emit({ type: 'history_synced' });
    }
  }
}

/**
 * The sandbox's history sync at pairing (DECISIONS 16; docs/api.md, History sync): when a number pairs a device,
 * its earlier conversations the world keeps are offered to the device, in batches, then their end.
 *
 * Owns: what a number's history is here (the messages its devices sent to phones in this view, as the phones'
 * inboxes keep them, and what a tester seeded for it with `seedHistory`), and offering it: batches of at most
 * HISTORY_BATCH messages, oldest first, each only after the gateway took the one before, then `history_synced`
 * (nothing at all for a number without history).
 * Must never: offer one view's history to another view's device, offer history on a reconnect (only a pairing
 * does), or keep more than SEEDED_LIMIT seeded messages per number and view.
 */
import { randomBytes } from 'node:crypto';
import { HISTORY_BATCH, type HistoryMessage, type PhoneNumber } from '../network.js';
import { SandboxControlError } from '../sandbox-control.js';
import { isWellFormedPhone, type PhoneView } from './phones.js';
import type { Link, SeededHistoryMessage, WorldState } from './state.js';

/** What `seedHistory` takes for one message. */
export interface SeedMessage {
  readonly text: string;
  readonly from_me?: boolean;
  /** When it was sent (ISO 8601); now when absent. */
  readonly at?: string;
}

/** Seeded messages kept per number and view at most (the oldest go first). */
export const SEEDED_LIMIT = 20_000;
/** Messages one `seedHistory` call takes at most. */
export const SEED_AT_ONCE = 1_000;

const key = (view: PhoneView, number: PhoneNumber) => `${view}\u0000${number}`;

/**
 * The phone `phone` had a conversation with the number `to` before `to` pairs a device: `messages` join that
 * number's history in `view` (offered at its next pairing). 400 for a malformed number or message.
 */
export function seedHistory(
  world: WorldState,
  phone: PhoneNumber,
  to: PhoneNumber,
  messages: ReadonlyArray<SeedMessage>,
  view: PhoneView,
): { seeded: number } {
  if (!isWellFormedPhone(phone) || !isWellFormedPhone(to)) {
    throw new SandboxControlError(400, 'Invalid phone number format');
  }
  if (!Array.isArray(messages) || messages.length < 1 || messages.length > SEED_AT_ONCE) {
    throw new SandboxControlError(400, 'Invalid history', `1 to ${SEED_AT_ONCE} messages at once`);
  }
  const seeded: SeededHistoryMessage[] = [];
  for (const message of messages) {
    const at = message.at === undefined ? Date.now() : Date.parse(message.at);
    if (typeof message.text !== 'string' || message.text === '' || !Number.isFinite(at)) {
      throw new SandboxControlError(400, 'Invalid history', 'each message needs a text and a valid `at`');
    }
    const id = `HIST${randomBytes(10).toString('hex').toUpperCase()}`;
    seeded.push({ id, phone, fromMe: message.from_me === true, text: message.text, at });
  }
  const all = [...(world.histories.get(key(view, to)) ?? []), ...seeded];
  world.histories.set(key(view, to), all.slice(Math.max(0, all.length - SEEDED_LIMIT)));
  return { seeded: seeded.length };
}

/** The number's history in the link's view, oldest first. */
function historyOf(world: WorldState, link: Link, number: PhoneNumber): HistoryMessage[] {
  const messages: HistoryMessage[] = [];
  for (const seeded of world.histories.get(key(link.view, number)) ?? []) {
    messages.push({
      id: seeded.id,
      fromMe: seeded.fromMe,
      chat: seeded.phone,
      ...(seeded.fromMe ? {} : { from: seeded.phone }),
      content: { type: 'chat', text: seeded.text },
      at: new Date(seeded.at),
    });
  }
  // What the number's devices sent to phones of this view, as the phones keep it (texts; one-to-one chats).
  for (const record of world.phones.values()) {
    for (const stored of record.inbox) {
      const { entry } = stored;
      if (stored.view !== link.view || entry.from !== number || entry.group_id !== undefined) continue;
      if (entry.type !== 'chat' || typeof entry.content.text !== 'string') continue;
      messages.push({
        id: entry.message_id,
        fromMe: true,
        chat: record.phone,
        content: { type: 'chat', text: entry.content.text },
        at: new Date(entry.received_at),
      });
    }
  }
  return messages.sort((a, b) => a.at.getTime() - b.at.getTime());
}

/** Offers the newly paired link its number's history: batch by batch, each once the last was taken, then the end. */
export function offerHistory(world: WorldState, link: Link, number: PhoneNumber): void {
  const messages = historyOf(world, link, number);
  // A number with no history here is offered none, as a phone with no conversations (no end is told either).
  if (messages.length === 0) return;
  let next = 0;
  const offer = (): void => {
    if (link.state !== 'open') return;
    if (next >= messages.length) {
      world.emit(link, { type: 'history_synced' });
      return;
    }
    const batch = messages.slice(next, next + HISTORY_BATCH);
    next += batch.length;
    let taken = false;
    world.emit(link, {
      type: 'history_messages',
      messages: batch,
      taken: () => {
        if (taken) return;
        taken = true;
        world.later(0, offer);
      },
    });
  };
  world.later(0, offer);
}

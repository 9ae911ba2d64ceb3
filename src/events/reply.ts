/**
 * Reply by response, the sending side (docs/internals.md, Whatspie compatibility): the replies a
 * receiver's answer asked for (reply-answer.ts) become messages from the
 * device to the chat the incoming message came from (its sender, or its
 * group), through `POST /messages`' own path: the same canonical mapping and
 * validation, the same checks of the device, the same media fetching, the
 * same durable, quota-counted acceptance (messages/service.ts). A reaction
 * is on the incoming message itself (messages/reaction.ts), accepted the same
 * way.
 *
 * Owns: the send body of each reply, and that each reply of a delivery is
 * accepted at most once however often the delivery is attempted: reply n of
 * event E carries the Idempotency-Key `webhook-reply:E:n`, so an attempt
 * repeated after a crash (the receiver answered, the outcome was not
 * recorded) or a manual retry within the key's 24 h answers the message
 * accepted the first time instead of sending again. A reply refused for good
 * (validation, quota, device) is noted and the others still go; a store
 * outage or a media download queue that is full stops the rest and asks for
 * the delivery to be attempted again.
 * Must never: send anything but what the answer asked for, to anyone but the
 * incoming message's chat, or skip the messages service's checks.
 */
import { ApiError, errorBody, type ErrorBody } from '../errors.js';
import type { ReactionRequest } from '../messages/reaction.js';
import { readReplies, type ReplyRequest } from './reply-answer.js';
import type { Answer } from './attempt.js';

/** The part of the messages service replies go through (`POST /messages`). */
export interface ReplySender {
  send(accountId: number, body: unknown, idempotencyKey: string | undefined): Promise<{ data: { id: string } }>;
  /** A reaction to the incoming message (messages/reaction.ts): no `POST /messages` type, the same acceptance. */
  react(
    accountId: number,
    reaction: ReactionRequest,
    idempotencyKey: string | undefined,
  ): Promise<{ data: { id: string } }>;
}

export type ReplyResult =
  | { readonly type: string; readonly status: 'queued'; readonly message_id: string }
  /** An earlier attempt of this delivery queued a different reply at this place; this one is not sent. */
  | { readonly type: string; readonly status: 'already_queued' }
  | { readonly type: string; readonly status: 'refused'; readonly error: ErrorBody };

/** What an attempt's answer asked for and what came of it (stored on the attempt, shown in the delivery log). */
export interface ReplyNote {
  /** Why the answer as a whole was not read as replies; null when it was. */
  readonly ignored: string | null;
  /** One per reply asked for, in the answer's order (those after a stop are missing). */
  readonly replies: readonly ReplyResult[];
}

export interface ReplyOutcome {
  readonly note: ReplyNote;
  /** Set when the delivery must be attempted again (replies could not be queued for now): why. */
  readonly retry: string | null;
}

/** The incoming message a delivery announced, as its stored event tells it. */
interface Incoming {
  readonly device: string;
  readonly chat: string;
  /** The gateway's id of the incoming message: what a reaction is on. */
  readonly id: string;
}

/** Failures that pass: the delivery is attempted again rather than its reply dropped. */
const PASSING: ReadonlySet<string> = new Set(['STORE_UNAVAILABLE', 'TOO_MANY_REQUESTS', 'IDEMPOTENCY_IN_USE']);

export class RepliesByResponse {
  constructor(private readonly sender: ReplySender) {}

  /** Queues the replies `answer` asks for in answer to event `eventId` (its stored standard body `payload`). */
  async handle(accountId: number, eventId: string, payload: string, answer: Answer): Promise<ReplyOutcome> {
    const read = readReplies(answer);
    if ('ignored' in read) return { note: { ignored: read.ignored, replies: [] }, retry: null };
    const incoming = incomingOf(payload);
    if (incoming === null) {
      return { note: { ignored: 'the delivery does not name a chat to answer', replies: [] }, retry: null };
    }
    const results: ReplyResult[] = [];
    for (const [index, reply] of read.replies.entries()) {
      try {
        const key = `webhook-reply:${eventId}:${index}`;
        const answer =
          reply.type === 'reaction'
            ? await this.sender.react(
                accountId,
                { device: incoming.device, chat: incoming.chat, messageId: incoming.id, emoji: reply.body },
                key,
              )
            : await this.sender.send(accountId, sendBody(incoming, reply), key);
        results.push({ type: reply.type, status: 'queued', message_id: answer.data.id });
      } catch (error) {
        if (error instanceof ApiError && error.code === 'IDEMPOTENCY_REUSE') {
          results.push({ type: reply.type, status: 'already_queued' });
          continue;
        }
        if (error instanceof ApiError && !PASSING.has(error.code)) {
          results.push({ type: reply.type, status: 'refused', error: errorBody(error) });
          continue;
        }
        const why = error instanceof ApiError ? error.message : 'the store is out of service';
        return {
          note: { ignored: null, replies: results },
          retry: `replies could not be queued (${why}); the delivery is attempted again`,
        };
      }
    }
    return { note: { ignored: null, replies: results }, retry: null };
  }
}

/** The `POST /messages` body of one reply. */
function sendBody(incoming: Incoming, reply: Exclude<ReplyRequest, { type: 'reaction' }>): Record<string, unknown> {
  const base = { device: incoming.device, receiver: incoming.chat };
  if (reply.type === 'chat') {
    return { ...base, type: 'chat', params: { text: reply.body }, simulate_typing: reply.simulation ? 1 : 0 };
  }
  return { ...base, type: reply.type, params: reply.params };
}

/** Who received the message and where to answer it: its group, or its sender. */
function incomingOf(payload: string): Incoming | null {
  const event = JSON.parse(payload) as { data?: Record<string, unknown> };
  const data = event.data ?? {};
  const params = (data.params ?? {}) as Record<string, unknown>;
  const device = data.device;
  const chat = typeof params.group_id === 'string' ? params.group_id : data.sender;
  const id = data.id;
  return typeof device === 'string' && typeof chat === 'string' && typeof id === 'string' ? { device, chat, id } : null;
}

/**
 * Reactions (reply by response, docs/internals.md, Whatspie compatibility): a receiver's `{type: "reaction", body}` answer to an
 * incoming message. Choice: `reaction` is no `POST /messages` type (the contract names none); it
 * exists only for reply by response, which names the message to react to itself, so a client never
 * picks a target. Pure (a bounded memo of which texts are one emoji is its only state).
 *
 * Owns: what a reaction's body must be (exactly one emoji: one grapheme that is an emoji, a flag or a
 * keycap; an empty body, which would take a reaction away, is refused like any other) and the
 * request stored for it: the emoji as its `message`, the reacted-to id in its params, and that id
 * as the message it quotes, so acceptance resolves the target as it resolves a reply's quote.
 * Must never: do I/O, or throw anything but an ApiError.
 */
import { ApiError } from '../errors.js';
import type { ValidatedMessage } from './validate.js';

export const NOT_ONE_EMOJI = 'must be exactly one emoji';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** An emoji, a flag (two regional indicators) or a keycap (digit, # or * with U+20E3). */
const EMOJI = /^(?:\p{Extended_Pictographic}|\p{Regional_Indicator}{2}|[0-9#*]\uFE0F?\u20E3)/u;

/**
 * Answers already worked out, by text: clients send the same few emojis again and again, and splitting a text into
 * graphemes was a few per cent of the CPU of each reaction (bench/README.md). Bounded; the answer never changes.
 */
const known = new Map<string, boolean>();
const KNOWN_AT_MOST = 1024;

/** True when `text` is one grapheme, and that grapheme is an emoji. */
export function isOneEmoji(text: string): boolean {
  if (text.length === 0 || text.length > 64) return false;
  const seen = known.get(text);
  if (seen !== undefined) return seen;
  const answer = EMOJI.test(text) && oneGrapheme(text);
  if (known.size >= KNOWN_AT_MOST) known.clear();
  known.set(text, answer);
  return answer;
}

function oneGrapheme(text: string): boolean {
  let count = 0;
  for (const _ of segmenter.segment(text)) if (++count > 1) return false;
  return count === 1;
}

export interface ReactionRequest {
  /** The sending device's number. */
  readonly device: string;
  /** The chat the reacted-to message is in (its sender, or its group). */
  readonly chat: string;
  /** The reacted-to message: the gateway's id of a message the device received or sent. */
  readonly messageId: string;
  readonly emoji: string;
}

/** The reaction as a validated message, ready for the same acceptance as `POST /messages`. */
export function validateReaction(reaction: ReactionRequest): ValidatedMessage {
  if (!isOneEmoji(reaction.emoji)) {
    throw new ApiError('VALIDATION_FAILED', { errors: { body: [NOT_ONE_EMOJI] } });
  }
  return {
    device: reaction.device,
    receiver: reaction.chat,
    type: 'reaction',
    simulateTyping: 0,
    message: reaction.emoji,
    params: { emoji: reaction.emoji, message_id: reaction.messageId },
    media: null,
    content: null,
    quotedMessageId: reaction.messageId,
  };
}

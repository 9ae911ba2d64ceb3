/**
 * Reply by response, the answer's side (docs/internals.md, Whatspie compatibility): what a receiver's 2xx
 * answer to a `message.incoming` delivery asks the gateway to send back.
 *
 * Owns: reading the answer's text as one of the shapes Whatspie's receivers
 * send, `{type: "chat", body, simulation?}`, `{type: "image" | "file",
 * params}`, `{type: "reaction", body}`, or an array of those, and the bounds:
 * at most REPLY_ANSWER_MAX_BYTES of answer and REPLIES_PER_ANSWER_MAX replies.
 * An answer that is anything else is ignored as a whole, with the reason.
 * Only the outer shape is checked here: what a reply's text or params must be
 * is the message validation's (src/messages), through the same path as
 * `POST /messages`.
 * Must never: do I/O, or throw on any answer text.
 */
import { isRecord } from '../messages/canonical.js';

/** The answer read for replies, at most (bytes); a longer one is ignored, unread past this. */
export const REPLY_ANSWER_MAX_BYTES = 64 * 1024;
/** Replies one answer may ask for; an array longer than this is ignored as a whole. */
export const REPLIES_PER_ANSWER_MAX = 5;

export type ReplyRequest =
  | { readonly type: 'chat'; readonly body: string; readonly simulation: boolean }
  | { readonly type: 'image' | 'file'; readonly params: Record<string, unknown> }
  | { readonly type: 'reaction'; readonly body: string };

export type ReadAnswer = { readonly replies: readonly ReplyRequest[] } | { readonly ignored: string };

export const NOT_A_REPLY =
  'the answer is not a reply: expected {"type": "chat", "body"}, {"type": "image" | "file", "params"}, ' +
  '{"type": "reaction", "body"} or an array of them';

/** The replies an answer asks for, or why it is ignored. */
export function readReplies(answer: { text: string } | { tooLarge: true }): ReadAnswer {
  if ('tooLarge' in answer) return { ignored: `the answer is larger than ${REPLY_ANSWER_MAX_BYTES / 1024} KiB` };
  const text = answer.text.trim();
  if (text === '') return { ignored: 'the answer is empty' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ignored: 'the answer is not JSON' };
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return { ignored: 'the answer is an empty array' };
  if (items.length > REPLIES_PER_ANSWER_MAX) {
    return { ignored: `the answer asks for ${items.length} replies; at most ${REPLIES_PER_ANSWER_MAX} are sent` };
  }
  const replies: ReplyRequest[] = [];
  for (const item of items) {
    const reply = replyOf(item);
    if (reply === null) return { ignored: NOT_A_REPLY };
    replies.push(reply);
  }
  return { replies };
}

function replyOf(item: unknown): ReplyRequest | null {
  if (!isRecord(item)) return null;
  switch (item.type) {
    case 'chat':
      return typeof item.body === 'string'
        ? { type: 'chat', body: item.body, simulation: item.simulation === true || item.simulation === 1 }
        : null;
    case 'image':
    case 'file':
      return isRecord(item.params) ? { type: item.type, params: item.params } : null;
    case 'reaction':
      return typeof item.body === 'string' ? { type: 'reaction', body: item.body } : null;
    default:
      return null;
  }
}

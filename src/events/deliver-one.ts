/**
 * One webhook attempt (docs/internals.md, Webhooks): a claimed delivery rendered in its device's format,
 * signed, POSTed through the guarded dispatcher, and its answer read for replies when the format says so.
 * The result is the completion to record; the deliverer records it (outcomes.ts decides a failure's fate).
 *
 * Owns: the ends that make no request (no webhook_url, a deleted or disabled account webhook, a body that
 * cannot be rendered, a format with no body for the type), the request itself, and queueing the replies an answer carries before the outcome.
 * Must never: write to the store itself, send a body other than the stored payload in the device's
 * format, connect except through the guarded dispatcher, or outlive an abort (shutdown).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { Clock } from '../clock.js';
import { attemptDelivery, type AttemptResult } from './attempt.js';
import { answersWithReplies, renderBody, type WebhookFormat } from './formats/index.js';
import type { ClaimedEvent, Completion } from './repository.js';
import { eventIdOf } from './record.js';
import { REPLY_ANSWER_MAX_BYTES } from './reply-answer.js';
import type { RepliesByResponse, ReplyNote } from './reply.js';
import { signDelivery, signingSecrets } from './signing.js';
import type { Target } from './targets.js';

export const NO_WEBHOOK_URL_ERROR = 'the device has no webhook_url; delivery stopped';
export const WEBHOOK_GONE_ERROR = 'the webhook was deleted; delivery stopped';
export const WEBHOOK_DISABLED_ERROR = 'the webhook is disabled; delivery stopped';

/** A request that was made and answered (or failed): turned into its completion by the outcomes. */
export interface Answered {
  readonly event: ClaimedEvent;
  readonly url: string;
  readonly format: WebhookFormat;
  readonly note: ReplyNote | null;
  readonly attemptedAt: number;
  readonly result: AttemptResult;
}

export interface AttemptContext {
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** The guarded HTTP dispatcher (docs/internals.md, Sending). */
  readonly http: HttpDispatcher;
  readonly timeoutMs: number;
  /** Reply by response; without it answers are never read. */
  readonly replies: RepliesByResponse | undefined;
  /** Attempts under way (aborted when the close grace runs out): this one is in it while its request runs. */
  readonly attempts: Set<AbortController>;
  /** The completion of an answered request (delivered, retry or failed). */
  readonly outcome: (answered: Answered) => Completion;
}

/** A delivery that ends without a request, with the line its attempt writes. */
function ended(
  event: ClaimedEvent,
  attemptedAt: number,
  error: string,
  format: WebhookFormat | null,
  outcome: 'failed' | 'skipped',
): Completion {
  const attempt = {
    attempted_at: attemptedAt,
    http_status: null,
    latency_ms: 0,
    error,
    url: null,
    format,
    reply: null,
  };
  return { id: event.id, attempt, outcome };
}

/** One attempt of `event` to `target`: the completion to record ('released' when it was cut by shutdown). */
export async function deliverOne(
  event: ClaimedEvent,
  target: Target | undefined,
  context: AttemptContext,
): Promise<Completion> {
  const attemptedAt = context.clock.now();
  if (target === undefined || target.url === null) {
    const why = event.webhook_id === null ? NO_WEBHOOK_URL_ERROR : WEBHOOK_GONE_ERROR;
    return ended(event, attemptedAt, why, null, 'failed');
  }
  if (target.disabled) return ended(event, attemptedAt, WEBHOOK_DISABLED_ERROR, null, 'failed');
  const { format } = target;
  let body: string | null;
  try {
    body = renderBody(format, event.type, event.payload);
  } catch (error) {
    // Our own stored body that a renderer cannot read: a bug to fix, not a receiver to retry.
    context.logger.error({ err: error, eventId: event.id, format }, 'a webhook event could not be rendered');
    return ended(event, attemptedAt, `the event could not be written in the ${format} format`, format, 'failed');
  }
  if (body === null) {
    const error = `skipped: the ${format} webhook format has no body for ${event.type}`;
    return ended(event, attemptedAt, error, format, 'skipped');
  }
  const replies = context.replies;
  // Only the device's own webhook_url answers with replies: one event sent to several receivers replies once.
  const readsReplies =
    replies !== undefined && !target.accountWebhook && answersWithReplies(format, target.reply, event.type);
  // The event's id signs and names it (`webhook-id`) at every destination; a delivery row to an account webhook has its own.
  const eventId = event.webhook_id === null ? event.id : eventIdOf(event.payload);
  const abort = new AbortController();
  context.attempts.add(abort);
  let result = await attemptDelivery({
    url: target.url,
    headers: signDelivery(signingSecrets(target, attemptedAt), eventId, body, attemptedAt),
    custom: target.headers,
    body,
    dispatcher: context.http,
    timeoutMs: context.timeoutMs,
    abort,
    ...(readsReplies ? { answerLimit: REPLY_ANSWER_MAX_BYTES } : {}),
  }).finally(() => context.attempts.delete(abort));
  if (result.aborted) return { id: event.id, outcome: 'released' };
  let note: ReplyNote | null = null;
  if (result.ok && readsReplies && result.answer !== undefined) {
    const replied = await replies.handle(target.accountId, event.id, event.payload, result.answer);
    note = replied.note;
    // The receiver has the event, but its replies are not all queued: attempted again (they are idempotent).
    if (replied.retry !== null) result = { ...result, ok: false, error: replied.retry };
  }
  return context.outcome({ event, url: target.url, format, note, attemptedAt, result });
}

// Owns turning the findings of a request body (src/messages/checks.ts) into the one ApiError the
// client gets: the most structural kind of finding decides the code (a missing field or a wrong
// JSON type is `Validation failed`; otherwise the contract's specific message), and the answer
// names every failing field when it is `Validation failed`, or every field of its kind otherwise.
// It must never do I/O, never throw anything but an ApiError, and never report more than
// MAX_REPORTED_PATHS paths.
import { ApiError } from '../errors.js';
import type { Finding } from './checks.js';
import type { ViolationCode } from './schemas.js';

/** The codes a request body can be refused with, most structural first: the first one found wins. */
const PRIORITY = [
  'VALIDATION_FAILED',
  'INVALID_PHONE',
  'INVALID_IMAGE_URL',
  'INVALID_MEDIA_URL',
  'INVALID_LIST',
  'INVALID_CONTACT',
  'INVALID_POLL',
  'MESSAGE_TOO_LONG',
] as const satisfies readonly ViolationCode[];

/**
 * At most this many field paths are reported in one answer, so a huge malformed body cannot turn
 * into a many-megabyte error. Aggregate problems (too many sections) come before the items.
 */
export const MAX_REPORTED_PATHS = 100;

/** The ApiError for `found` (which must not be empty). */
export function refusal(found: readonly Finding[]): ApiError {
  const code = PRIORITY.find((candidate) => found.some((finding) => finding.code === candidate)) ?? 'VALIDATION_FAILED';
  const reported = code === 'VALIDATION_FAILED' ? found : found.filter((finding) => finding.code === code);
  const errors = new Map<string, string[]>();
  for (const { path: full, short, message } of reported) {
    const path = code === 'VALIDATION_FAILED' ? full : (short ?? full);
    const messages = errors.get(path);
    if (messages !== undefined) {
      if (!messages.includes(message)) messages.push(message);
    } else if (errors.size < MAX_REPORTED_PATHS) {
      errors.set(path, [message]);
    }
  }
  return new ApiError(code, { errors: Object.fromEntries(errors) });
}

// Owns collecting the violations found in one request body and turning them into one ApiError:
// every violation is recorded under its dotted field path, and the most structural kind of
// violation found decides the error code. Also owns the small readers every message type shares
// (own fields, texts with a character limit). It must never do I/O, never throw anything but an
// ApiError, and never put a value taken from the request into a field path (paths are made of
// our own field names and array indexes only).
import { ApiError, type ErrorCode } from '../http/errors.js';
import { exceedsCharacters, isBlank } from './text.js';

/** The codes a request body can be refused with, most structural first: the first one found wins. */
const PRIORITY = [
  'VALIDATION_FAILED',
  'INVALID_PHONE',
  'INVALID_IMAGE_URL',
  'INVALID_MEDIA_URL',
  'INVALID_LIST',
  'MESSAGE_TOO_LONG',
] as const satisfies readonly ErrorCode[];

export type ViolationCode = (typeof PRIORITY)[number];

/**
 * At most this many field paths are reported in one answer, so a huge malformed list cannot turn
 * a 1 MB body into a many-megabyte error. Aggregate problems (too many sections) are recorded
 * before the items, so they are never the ones left out.
 */
export const MAX_REPORTED_PATHS = 100;

export class Problems {
  private readonly found = new Map<ViolationCode, Map<string, string[]>>();
  private paths = 0;

  add(code: ViolationCode, path: string, message: string): void {
    let byPath = this.found.get(code);
    if (byPath === undefined) {
      byPath = new Map();
      this.found.set(code, byPath);
    }
    const messages = byPath.get(path);
    if (messages !== undefined) {
      if (!messages.includes(message)) messages.push(message);
      return;
    }
    if (this.paths >= MAX_REPORTED_PATHS) return;
    this.paths++;
    byPath.set(path, [message]);
  }

  get empty(): boolean {
    return this.found.size === 0;
  }

  /** Throws the ApiError of the most structural code found, naming every path recorded under it. */
  throwIfAny(): void {
    for (const code of PRIORITY) {
      const byPath = this.found.get(code);
      if (byPath !== undefined) throw new ApiError(code, { errors: Object.fromEntries(byPath) });
    }
  }
}

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An own field of a JSON object; `null` reads as absent, as most client libraries send null for an
 * optional field they have no value for. Inherited properties never count as fields.
 */
export function field(record: Record<string, unknown>, key: string): unknown {
  if (!Object.hasOwn(record, key)) return undefined;
  const value = record[key];
  return value === null ? undefined : value;
}

/** Dotted path of a field below `base` (`base` may be empty: the path is then relative to it). */
export function join(base: string, key: string | number): string {
  return base === '' ? String(key) : `${base}.${key}`;
}

export interface TextRule {
  /** Limit in user-perceived characters (countCharacters). */
  readonly max: number;
  readonly required: boolean;
  /** Code for a missing, non-string or empty value. */
  readonly code: ViolationCode;
  /** Code for a value over `max`; defaults to `code`. */
  readonly tooLong?: ViolationCode;
  /**
   * Identifiers (row ids, reply ids) only need to be non-empty; texts shown to a person must also
   * contain something visible. Default false.
   */
  readonly identifier?: boolean;
}

/**
 * Reads a text field. Returns the text as sent (never trimmed) when it is acceptable; undefined
 * when it is absent or refused. An optional text sent empty is treated as absent, so an empty
 * caption or footer is neither echoed nor sent.
 */
export function readText(problems: Problems, path: string, value: unknown, rule: TextRule): string | undefined {
  if (value === undefined) {
    if (rule.required) problems.add(rule.code, path, 'is required');
    return undefined;
  }
  if (typeof value !== 'string') {
    problems.add(rule.code, path, 'must be a string');
    return undefined;
  }
  if (value.length === 0) {
    if (rule.required) problems.add(rule.code, path, 'must not be empty');
    return undefined;
  }
  if (rule.required && rule.identifier !== true && isBlank(value)) {
    problems.add(rule.code, path, 'must not be blank');
    return undefined;
  }
  if (exceedsCharacters(value, rule.max)) {
    problems.add(rule.tooLong ?? rule.code, path, `must be at most ${rule.max} characters`);
    return undefined;
  }
  return value;
}

/** Reads an optional boolean flag; undefined when absent or refused. */
export function readFlag(problems: Problems, path: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') {
    problems.add('VALIDATION_FAILED', path, 'must be a boolean');
    return undefined;
  }
  return value;
}

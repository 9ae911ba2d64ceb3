/**
 * What `PATCH /chats/{chat}` may ask (DECISIONS 16): `archived` and `pinned` (booleans), `muted_until` (an ISO 8601
 * time in the future, or null to unmute); at least one of them.
 *
 * Owns: those rules and their 400s (`Validation failed`, every wrong field named at once).
 * Must never: do I/O.
 */
import { ApiError } from '../errors.js';
import type { ChatSettings } from './repository.js';

export const SETTINGS_FIELDS = ['archived', 'pinned', 'muted_until'] as const;
export const NO_SETTING_RULE = 'give at least one of archived, pinned and muted_until';
export const BOOLEAN_RULE = 'must be true or false';
export const MUTED_UNTIL_RULE =
  'must be a time in the future (ISO 8601, with its offset, e.g. 2030-01-01T00:00:00Z) or null';

/** An ISO 8601 date and time with its offset: what `muted_until` takes. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

export function readSettings(body: unknown, now: number): ChatSettings {
  const fields =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const errors: Record<string, string[]> = {};
  const settings: { archived?: boolean; pinned?: boolean; mutedUntil?: number | null } = {};
  for (const name of ['archived', 'pinned'] as const) {
    const value = fields[name];
    if (value === undefined) continue;
    if (typeof value === 'boolean') settings[name] = value;
    else errors[name] = [BOOLEAN_RULE];
  }
  const muted = fields.muted_until;
  if (muted === null) settings.mutedUntil = null;
  else if (muted !== undefined) {
    const at = typeof muted === 'string' && DATE_TIME.test(muted) ? Date.parse(muted) : NaN;
    if (Number.isFinite(at) && at > now) settings.mutedUntil = at;
    else errors.muted_until = [MUTED_UNTIL_RULE];
  }
  if (Object.keys(errors).length === 0 && SETTINGS_FIELDS.every((name) => fields[name] === undefined)) {
    errors.archived = [NO_SETTING_RULE];
  }
  if (Object.keys(errors).length > 0) throw new ApiError('VALIDATION_FAILED', { errors });
  return settings;
}

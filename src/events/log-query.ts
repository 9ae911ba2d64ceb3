/**
 * What `GET /events`, `/events/stream` and `/events/ws` are asked for (DECISIONS 17): the account's events, of one
 * device (`device=` its id or its phone) and of some types (`types=` comma-separated), after a cursor.
 *
 * Owns: turning those query fields into a LogFilter and a cursor, with the contract's refusals: an unknown type or
 * a string that is no cursor is 400 `Validation failed`, a device not the account's (or deleted) 404 `Device not found`.
 * Must never: read the log itself, or let one account name another's device.
 */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../errors.js';
import { devicesRepository } from '../devices/repository.js';
import type { Db } from '../store/schema.js';
import { isCursor, type LogFilter } from './log.js';
import { EVENT_TYPES } from './types.js';

/** The filters every log route takes (its query string schema). */
export const LogQuerySchema = Type.Object({
  device: Type.Optional(Type.String({ maxLength: 32, description: 'Only this device’s events: its id or its phone' })),
  types: Type.Optional(
    Type.String({
      maxLength: 1024,
      description: `Only these event types, comma-separated: ${EVENT_TYPES.join(', ')}`,
    }),
  ),
  after: Type.Optional(Type.String({ maxLength: 64, description: 'Only events after this cursor' })),
});

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

export interface LogQuery {
  readonly device?: string | undefined;
  readonly types?: string | undefined;
  readonly after?: string | undefined;
}

export interface LogSelection {
  readonly filter: LogFilter;
  /** The cursor asked for, or null: none given. */
  readonly after: string | null;
}

/** The filter and cursor of a request of `accountId`; `lastEventId` (SSE's resume header) wins over `after`. */
export async function logSelection(
  db: Db,
  accountId: number,
  query: LogQuery,
  lastEventId?: string,
): Promise<LogSelection> {
  const errors: Record<string, string[]> = {};
  let types: string[] | undefined;
  if (query.types !== undefined) {
    types = [...new Set(query.types.split(',').map((type) => type.trim()))];
    const unknown = types.filter((type) => !KNOWN_TYPES.has(type));
    if (unknown.length > 0 || types.length === 0) {
      errors.types = [`unknown event type: ${unknown.join(', ') || '(empty)'}; one of ${EVENT_TYPES.join(', ')}`];
    }
  }
  const after = lastEventId ?? query.after ?? null;
  if (after !== null && !isCursor(after)) {
    errors[lastEventId === undefined ? 'after' : 'last-event-id'] = ['must be a cursor the gateway gave out'];
  }
  if (Object.keys(errors).length > 0) throw new ApiError('VALIDATION_FAILED', { errors });
  let deviceIds: number[] | undefined;
  if (query.device !== undefined) deviceIds = [await deviceOf(db, accountId, query.device)];
  return {
    filter: { accountId, ...(deviceIds === undefined ? {} : { deviceIds }), ...(types === undefined ? {} : { types }) },
    after,
  };
}

/** The account's live device with this id, else with this phone; 404 when neither. */
async function deviceOf(db: Db, accountId: number, named: string): Promise<number> {
  const value = named.trim();
  if (/^\d{1,15}$/.test(value)) {
    const byId = await devicesRepository.findById(db, Number(value));
    if (byId !== undefined && byId.account_id === accountId && byId.deleted_at === null) return byId.id;
  }
  const byPhone = value === '' ? undefined : await devicesRepository.findByPhone(db, accountId, value);
  if (byPhone === undefined || byPhone.deleted_at !== null) throw new ApiError('DEVICE_NOT_FOUND');
  return byPhone.id;
}

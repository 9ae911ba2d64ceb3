/**
 * Which errors mean "the store is out of service", for both dialects, in one
 * place: PostgreSQL down, restarting, frozen or refusing connections, and
 * SQLite unable to write (full disk, I/O error, read-only file, locked).
 *
 * Owns: the classification of a thrown error as a store fault (and its code,
 * for the log and for readiness). Callers decide what to do with it: the HTTP
 * layer answers 503 with Retry-After; the workers retry.
 * Must never: classify a fault of the request itself (a constraint the
 * request broke, bad SQL) as an outage; those stay 500 and get fixed.
 */

/** Seconds a client is asked to wait (`Retry-After`) when the store is out of service. */
export const STORE_RETRY_AFTER_S = 5;

export interface StoreFault {
  /** The driver's code: `ECONNREFUSED`, `57P01`, `SQLITE_FULL`, ... */
  readonly code: string;
  /** `unavailable`: the store does not answer; `cannot-write`: it answers but refuses writes. */
  readonly kind: 'unavailable' | 'cannot-write';
}

/** Raised by the store itself when the database took longer than its bound to answer. */
export class StoreTimeoutError extends Error {
  readonly code = 'STORE_TIMEOUT';
  constructor(what: string, ms: number) {
    super(`${what} got no answer from the database within ${ms} ms`);
    this.name = 'StoreTimeoutError';
  }
}

/** Raised by the store itself, at once, while another caller is finding out whether a silent server is back. */
export class StoreUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor() {
    super('the database is not answering');
    this.name = 'StoreUnavailableError';
  }
}

/** The store could not be opened at start-up; the message names where and why, in one line. */
export class StoreOpenError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'StoreOpenError';
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'STORE_TIMEOUT',
  'STORE_UNAVAILABLE',
]);

/** PostgreSQL SQLSTATEs of a server that is going away, coming up, overloaded or cancelled our statement. */
const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '57P05', '53300', '57014', '55P03']);
/** PostgreSQL SQLSTATEs of a server that answers but cannot write (full disk, read-only standby). */
const PG_CANNOT_WRITE = new Set(['53100', '53200', '53000', '25006', '58030']);

/** node-postgres reports a lost or never-made connection with these messages and no code. */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Query read timeout',
];

function sqliteFault(code: string): StoreFault | null {
  const base = code.split('_').slice(0, 2).join('_');
  switch (base) {
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
    case 'SQLITE_PROTOCOL':
      return { code, kind: 'unavailable' };
    case 'SQLITE_FULL':
    case 'SQLITE_IOERR':
    case 'SQLITE_READONLY':
    case 'SQLITE_CANTOPEN':
    case 'SQLITE_NOMEM':
      return { code, kind: 'cannot-write' };
    default:
      return null;
  }
}

/** The store fault this error is, or null when it is not one. */
export function storeFault(error: unknown): StoreFault | null {
  if (error === null || typeof error !== 'object') return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_')) return sqliteFault(code);
    if (NETWORK_CODES.has(code)) return { code, kind: 'unavailable' };
    // SQLSTATE class 08: connection exception.
    if (code.length === 5 && code.startsWith('08')) return { code, kind: 'unavailable' };
    if (PG_UNAVAILABLE.has(code)) return { code, kind: 'unavailable' };
    if (PG_CANNOT_WRITE.has(code)) return { code, kind: 'cannot-write' };
  }
  // A connection attempt to every address of a host fails as one AggregateError.
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const fault = storeFault(inner);
      if (fault !== null) return fault;
    }
  }
  if (typeof message === 'string' && PG_CONNECTION_MESSAGES.some((known) => message.startsWith(known))) {
    return { code: 'CONNECTION_LOST', kind: 'unavailable' };
  }
  return null;
}

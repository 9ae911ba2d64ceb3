/**
 * What WhatsApp's libraries print to the console, taken off it (docs/whatsapp.md, Logs).
 *
 * Owns: replacing the process's console methods while a WhatsApp network
 * runs, so that lines printed from inside the Signal library or Baileys go to
 * the gateway's logger at debug level, rate-limited, and every other caller's
 * console output is left exactly as it was.
 * Must never: pass on anything but the library's own words: libsignal prints
 * whole session records ("Closing session:", with their keys) and errors
 * with payload context as extra arguments, so only a leading string is kept,
 * cut short; objects are dropped unread.
 */
/* eslint-disable no-console -- this module replaces the console methods on purpose */
import type { Logger } from 'pino';

const METHODS = ['log', 'info', 'warn', 'error', 'debug'] as const;
type Method = (typeof METHODS)[number];

/** Where a call comes from: the libraries' own files. */
const LIBRARY_FRAME = /[\\/]node_modules[\\/](libsignal|baileys|@whiskeysockets[\\/]baileys)[\\/]/;
/** At most this many lines per window reach the log; the rest are counted and said once. */
const LINES_PER_WINDOW = 20;
const WINDOW_MS = 10_000;
const MAX_TEXT = 160;

let installed: { count: number; restore: () => void } | null = null;

/** Takes the libraries' console output off the console until the returned release is called (counted). */
export function captureLibraryConsole(logger: Logger, now: () => number = Date.now): () => void {
  if (installed !== null) {
    installed.count += 1;
  } else {
    const original = new Map<Method, (...args: unknown[]) => void>();
    let windowStart = now();
    let lines = 0;
    let suppressed = 0;
    for (const method of METHODS) {
      const before = console[method] as (...args: unknown[]) => void;
      original.set(method, before);
      console[method] = (...args: unknown[]) => {
        if (!LIBRARY_FRAME.test(new Error().stack?.split('\n').slice(2, 4).join('\n') ?? '')) {
          before.apply(console, args);
          return;
        }
        const at = now();
        if (at - windowStart >= WINDOW_MS) {
          if (suppressed > 0) logger.debug({ suppressed }, 'WhatsApp library console lines suppressed');
          windowStart = at;
          lines = 0;
          suppressed = 0;
        }
        if (lines >= LINES_PER_WINDOW) {
          suppressed += 1;
          return;
        }
        lines += 1;
        const first = args[0];
        const text = typeof first === 'string' ? first.slice(0, MAX_TEXT) : '(no text)';
        logger.debug({ library: method, dropped: args.length - 1 }, `WhatsApp library: ${text}`);
      };
    }
    installed = {
      count: 1,
      restore: () => {
        for (const [method, before] of original) console[method] = before;
      },
    };
  }
  let released = false;
  return () => {
    if (released || installed === null) return;
    released = true;
    installed.count -= 1;
    if (installed.count === 0) {
      installed.restore();
      installed = null;
    }
  };
}

/**
 * The nesting limit of JSON bodies.
 *
 * Owns: refusing, before parsing, a JSON text whose objects and arrays nest
 * deeper than MAX_JSON_DEPTH. A 1 MB body of `[[[[...` takes the parser
 * hundreds of milliseconds on the event loop and would make every recursive
 * walk of the value (the idempotency hash, copies) overflow the stack; no
 * request of this API nests more than a few levels.
 * Must never: parse or change the text; its scan is one pass over it.
 */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** True when the objects and arrays of `text` nest deeper than `max` (strings are skipped). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (inString) {
      if (unit === BACKSLASH) i++;
      else if (unit === QUOTE) inString = false;
    } else if (unit === QUOTE) {
      inString = true;
    } else if (unit === OPEN_OBJECT || unit === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (unit === CLOSE_OBJECT || unit === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

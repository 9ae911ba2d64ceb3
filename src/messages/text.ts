// Owns what "N characters" means for every message limit: user-perceived characters (extended
// grapheme clusters, Intl.Segmenter), so an emoji with a skin tone or a family emoji counts once,
// however many UTF-16 units or code points it takes. It must never do I/O, never change the text,
// never count with `.length` (which counts UTF-16 units, not what the user sees), and never let the
// cost of a check grow with the text beyond the limit it is checked against: texts come from
// untrusted bodies of up to 1 MB, and this runs on the event loop.

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * UTF-16 units segmented at a time. V8's segment iterator costs time proportional to the whole
 * string at every step, so segmenting a 1 MB text to find its 4,097th character takes seconds;
 * segmenting windows of this size keeps each step cheap (about a millisecond per window).
 */
export const SEGMENT_WINDOW = 1024;

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/**
 * Counts user-perceived characters from the start of `text`, stopping once `stopAt` are counted.
 * Each window is cut at the start of its last character, which may continue past the window, so
 * the next window begins on a real boundary. A single character longer than a whole window (a
 * letter with more than a thousand combining marks) counts once per window it spans: a text made
 * of such characters is refused a little early rather than segmented at quadratic cost.
 */
export function countCharactersUpTo(text: string, stopAt: number, window = SEGMENT_WINDOW): number {
  let { count, start } = simplePrefix(text, stopAt);
  while (start < text.length && count < stopAt) {
    let end = Math.min(start + window, text.length);
    // Never split a surrogate pair: its halves would count as two broken characters.
    if (end < text.length && end - start > 1 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    const final = end === text.length;
    let lastStart = -1;
    let inWindow = 0;
    for (const { index } of graphemes.segment(text.slice(start, end))) {
      if (lastStart >= 0) {
        count++;
        if (count >= stopAt) return count;
      }
      lastStart = index;
      inWindow++;
    }
    if (final) return count + 1;
    if (inWindow === 1) {
      // One character fills the window: count it and move on by the whole window.
      count++;
      start = end;
    } else {
      start += lastStart;
    }
  }
  return count;
}

/** Below this code unit, every unit is a character of its own, but CR LF (one) and a unit a mark follows. */
const FIRST_COMBINING = 0x300;

/**
 * Counts the leading run of units below U+0300 (ASCII and Latin-1, the bulk of most texts) without
 * the segmenter: none of them joins the next (Unicode's grapheme rules only join CR LF among them).
 * The run's last character is handed back to the segmenter, since a combining mark may follow it.
 */
function simplePrefix(text: string, stopAt: number): { count: number; start: number } {
  let count = 0;
  let start = 0;
  let previous = 0;
  while (start < text.length && count < stopAt) {
    if (text.charCodeAt(start) >= FIRST_COMBINING) {
      return count === 0 ? { count, start } : { count: count - 1, start: previous };
    }
    previous = start;
    start += text.charCodeAt(start) === 0x0d && text.charCodeAt(start + 1) === 0x0a ? 2 : 1;
    count++;
  }
  return { count, start };
}

/** User-perceived characters in `text`: '👍🏽' and '👨‍👩‍👧' count 1 each. Linear in the text's length. */
export function countCharacters(text: string): number {
  return countCharactersUpTo(text, Number.POSITIVE_INFINITY);
}

/** True when `text` has at most `max` code points; looks at no more than about 2 × max units. */
function codePointsAtMost(text: string, max: number): boolean {
  let points = 0;
  for (let i = 0; i < text.length; i++) {
    if (isHighSurrogate(text.charCodeAt(i)) && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    if (++points > max) return false;
  }
  return true;
}

/**
 * True when `text` has more than `max` user-perceived characters. Costs time proportional to
 * `max`, not to the text: a text no longer than the limit in UTF-16 units or in code points fits
 * at once (a character is at least one of each), and otherwise counting stops past the limit.
 */
export function exceedsCharacters(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (codePointsAtMost(text, max)) return false;
  return countCharactersUpTo(text, max + 1) > max;
}

/** True for a string with nothing visible to send: empty or only whitespace. Stops at the first visible unit. */
export function isBlank(text: string): boolean {
  // `\s` is the set String.prototype.trim removes; the search ends at the first other unit.
  return !/\S/u.test(text);
}

// Owns what "N characters" means for every message limit: user-perceived characters (extended
// grapheme clusters, Intl.Segmenter), so an emoji with a skin tone or a family emoji counts once,
// however many UTF-16 units or code points it takes. It must never do I/O, never change the text,
// and never count with `.length` (which counts UTF-16 units, not what the user sees).

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** User-perceived characters in `text`: '👍🏽' and '👨‍👩‍👧' count 1 each. */
export function countCharacters(text: string): number {
  let count = 0;
  // Every grapheme is at least one UTF-16 unit, so an empty string needs no segmenter.
  if (text.length === 0) return 0;
  for (const _ of graphemes.segment(text)) count++;
  return count;
}

/** True when `text` has more than `max` user-perceived characters; stops counting past the limit. */
export function exceedsCharacters(text: string, max: number): boolean {
  // A grapheme is at least one UTF-16 unit, so a string no longer than the limit in units fits.
  if (text.length <= max) return false;
  let count = 0;
  for (const _ of graphemes.segment(text)) {
    if (++count > max) return true;
  }
  return false;
}

/** True for a string with nothing visible to send: empty or only whitespace. */
export function isBlank(text: string): boolean {
  return text.trim().length === 0;
}

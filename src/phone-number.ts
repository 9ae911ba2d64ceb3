/**
 * Phone numbers as the API takes them (spec 4.5 rule 1), and the ways people
 * write them turned into that form.
 *
 * Owns: the number rule and the one normalisation the dashboard applies to
 * what a person types. Must never: import anything (the dashboard's browser
 * build includes this file as it is: no Node.js, no DOM), or guess a country
 * code: a number written with a leading 0 is a national number, and stays as
 * typed so the API refuses it (sending it to the number it looks like after
 * dropping the 0 would reach a stranger).
 */

/** Digits only, country code first, no `+`, no leading zero; 7 to 15 digits (E.164). */
export const PHONE_PATTERN = /^[1-9][0-9]{6,14}$/;

/** What people put between the digits of a number: spaces of every kind, dashes, dots, slashes, parentheses. */
const SEPARATORS = /[\s\u00a0\u2010-\u2015\u2212./()-]/g;

/**
 * `+62 898-1234-5678`, `+62 (898) 1234 5678` → `6289812345678`. Separators go,
 * and so does one leading `+`. Anything that is not a written-out number (a
 * group's `…@g.us` id, letters) is returned trimmed but otherwise as typed, for
 * the API to accept or refuse.
 */
export function normalisePhone(typed: string): string {
  const trimmed = typed.trim();
  const compact = trimmed.replace(SEPARATORS, '');
  const digits = compact.startsWith('+') ? compact.slice(1) : compact;
  return /^[0-9]+$/.test(digits) ? digits : trimmed;
}

/**
 * A list of numbers as typed into one box: one per line, or separated by
 * commas or semicolons. Spaces separate numbers only when every space-separated
 * part is a whole number by itself (`6281… 6282…`); otherwise they are inside
 * one number (`+62 898 1234 5678`).
 */
export function splitPhoneList(typed: string): string[] {
  return typed
    .split(/[\n,;]+/)
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .flatMap((part) => {
      const words = part.split(/\s+/);
      const separate = words.length > 1 && words.every((w) => PHONE_PATTERN.test(normalisePhone(w)));
      return separate ? words.map(normalisePhone) : [normalisePhone(part)];
    });
}

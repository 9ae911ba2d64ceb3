// Character counting at the limits of untrusted input (issue 10 item 1): the count of a window-wise
// segmentation equals the count over the whole string, and checking a huge text against a limit
// never segments more than a window at a time nor more windows than the limit needs.
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  countCharacters,
  countCharactersUpTo,
  exceedsCharacters,
  isBlank,
  SEGMENT_WINDOW,
} from '../../src/messages/text.js';

const FAMILY = '👨‍👩‍👧';
const THUMBS = '👍🏽';
const whole = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const reference = (text: string) => [...whole.segment(text)].length;
const longestCluster = (text: string) => Math.max(0, ...[...whole.segment(text)].map((s) => s.segment.length));

const PIECES = [
  'a',
  FAMILY,
  THUMBS,
  '🇮🇩',
  '🇮',
  'e\u0301',
  '\u0301',
  '字',
  '\r',
  '\n',
  '\u200d',
  '\ud800',
  '\udc00',
  'क्',
  'ष',
  '\u{10000}',
];

/** Records the length of every string given to Intl.Segmenter#segment while `run` runs. */
function segmentedLengths(run: () => void): number[] {
  const lengths: number[] = [];
  const original = Intl.Segmenter.prototype.segment;
  const spy = vi.spyOn(Intl.Segmenter.prototype, 'segment').mockImplementation(function (this: Intl.Segmenter, input) {
    lengths.push(String(input).length);
    return original.call(this, input);
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return lengths;
}

afterEach(() => vi.restoreAllMocks());

describe('countCharactersUpTo', () => {
  it('counts like a whole-string segmentation whenever every character fits in half a window', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...PIECES), { maxLength: 80 }),
        fc.constantFrom(24, 33, 64),
        (parts, window) => {
          const text = parts.join('');
          fc.pre(longestCluster(text) * 2 < window);
          expect(countCharactersUpTo(text, Number.POSITIVE_INFINITY, window)).toBe(reference(text));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('stops at the count asked for', () => {
    expect(countCharactersUpTo('a'.repeat(10_000), 5)).toBe(5);
    expect(countCharactersUpTo(FAMILY.repeat(3_000), 2_000)).toBe(2_000);
  });

  it('counts a Latin run without the segmenter, handing its last character back when a mark follows', () => {
    expect(countCharactersUpTo(`${'a'.repeat(5000)}e\u0301`, Number.POSITIVE_INFINITY)).toBe(5001);
    expect(countCharactersUpTo('\r\n'.repeat(3), Number.POSITIVE_INFINITY)).toBe(3);
    expect(segmentedLengths(() => countCharactersUpTo('a'.repeat(1_000_000), 4097))).toEqual([]);
  });

  it('counts a character longer than a window once per window it spans', () => {
    const zalgo = `a${'\u0301'.repeat(SEGMENT_WINDOW * 3 - 1)}`;
    expect(countCharactersUpTo(zalgo, Number.POSITIVE_INFINITY)).toBe(3);
  });
});

describe('countCharacters', () => {
  it('counts a long text of mixed characters exactly', () => {
    const unit = `a${FAMILY}é${THUMBS}🇮🇩\r\n字`;
    expect(countCharacters(unit.repeat(5_000))).toBe(7 * 5_000);
  });
});

describe('exceedsCharacters on a text far over the limit', () => {
  it.each([
    ['ASCII', 'a'.repeat(1_000_000)],
    ['family emoji', FAMILY.repeat(125_000)],
    ['flags', '🇮🇩'.repeat(250_000)],
    ['line breaks', '\r\n'.repeat(500_000)],
  ])('%s: segments only windows, and only as many as the limit needs', (_label, text) => {
    let result = false;
    const lengths = segmentedLengths(() => (result = exceedsCharacters(text, 4096)));
    expect(result).toBe(true);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(SEGMENT_WINDOW);
    // 4,097 characters of at most 8 units each, in windows cut at a character: well under 64 windows.
    expect(lengths.length).toBeLessThanOrEqual(64);
  });

  it('does not segment at all when the code points already fit', () => {
    const text = THUMBS.repeat(2048); // 8,192 units, 4,096 code points
    expect(segmentedLengths(() => expect(exceedsCharacters(text, 4096)).toBe(false))).toEqual([]);
  });

  it('still counts characters, not code points, at the boundary', () => {
    expect(exceedsCharacters(FAMILY.repeat(4096), 4096)).toBe(false);
    expect(exceedsCharacters(FAMILY.repeat(4097), 4096)).toBe(true);
    expect(exceedsCharacters(`${'e\u0301'.repeat(4096)}`, 4096)).toBe(false);
    expect(exceedsCharacters(`${'e\u0301'.repeat(4096)}x`, 4096)).toBe(true);
  });
});

describe('isBlank', () => {
  it.each([
    ['', true],
    [' \t\n\r\u00a0\u2003\ufeff', true],
    [' x ', false],
    ['\u200b', false], // zero-width space is not whitespace to trim either
  ])('%j → %s, as trim() decides', (text, blank) => {
    expect(isBlank(text)).toBe(blank);
    expect(isBlank(text)).toBe(text.trim().length === 0);
  });
});

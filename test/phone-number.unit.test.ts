// The number rule shared by the API and the dashboard, and how the dashboard
// turns numbers written the way people write them into it (issue 22).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PHONE_PATTERN, normalisePhone, splitPhoneList } from '../src/phone-number.js';
import { PHONE_PATTERN as API_PATTERN } from '../src/http/schemas.js';

describe('phone numbers as typed', () => {
  it('is the rule the API checks, in a module the dashboard’s browser build can include', () => {
    expect(API_PATTERN).toBe(PHONE_PATTERN);
    const source = readFileSync(new URL('../src/phone-number.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*(import|export .* from)\b/m);
  });

  it.each([
    ['+62 898-1234-5678', '6289812345678'],
    ['62 898 1234 5678', '6289812345678'],
    ['+62 (898) 1234.5678', '6289812345678'],
    ['\t+62\u00a0898\u20111234\u20135678 ', '6289812345678'],
    ['6289812345678', '6289812345678'],
  ])('%j becomes %j, which the API accepts', (typed, sent) => {
    expect(normalisePhone(typed)).toBe(sent);
    expect(PHONE_PATTERN.test(sent)).toBe(true);
  });

  it.each([
    ['0898-1234-5678', '089812345678'],
    ['0062 898 1234 5678', '006289812345678'],
    ['+0 898 1234', '08981234'],
  ])('a leading 0 is kept, so the API refuses %j as it would', (typed, sent) => {
    expect(normalisePhone(typed)).toBe(sent);
    expect(PHONE_PATTERN.test(sent)).toBe(false);
  });

  it('leaves what is not a written-out number as typed', () => {
    expect(normalisePhone(' 120363012345678901@g.us ')).toBe('120363012345678901@g.us');
    expect(normalisePhone('6281-3770@g.us')).toBe('6281-3770@g.us');
    expect(normalisePhone('++62 812')).toBe('++62 812');
    expect(normalisePhone('phone')).toBe('phone');
    expect(normalisePhone('')).toBe('');
  });

  it('splits a list by lines, commas and semicolons, and by spaces only between whole numbers', () => {
    expect(splitPhoneList('+62 898-1234-5678, 6281377000303\n+62 813 7700 0404;')).toEqual([
      '6289812345678',
      '6281377000303',
      '6281377000404',
    ]);
    expect(splitPhoneList('6281377000303 6281377000002')).toEqual(['6281377000303', '6281377000002']);
    expect(splitPhoneList('0812 3456 7890')).toEqual(['081234567890']);
    expect(splitPhoneList(' \n, ')).toEqual([]);
  });
});

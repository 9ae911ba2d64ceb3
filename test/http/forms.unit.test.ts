// docs/internals.md, Whatspie compatibility: form bodies. How field names nest (PHP style, through qs), the limits a form body is
// refused at (each at its boundary), and how a field's text is read where a schema expects a number,
// a boolean, null or a list: only where the schema places one, never where it takes text.
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { formValueAs } from '../../src/forms.js';
import { FORM_BRACKET_LIMIT, FORM_FIELD_LIMIT, FORM_LIST_LIMIT, parseFormFields } from '../../src/http/forms.js';
import { MAX_JSON_DEPTH } from '../../src/http/json-depth.js';
import { nestsDeeperThan } from '../../src/http/json-depth.js';
import { SendBodySchema } from '../../src/messages/schemas.js';

function refusal(text: string): Record<string, string[]> | undefined {
  try {
    parseFormFields(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('VALIDATION_FAILED');
    return (error as ApiError).detail.errors;
  }
  return undefined;
}

describe('parseFormFields', () => {
  it('nests names as PHP does', () => {
    expect(
      parseFormFields(
        'receiver=6289876543210&params[text]=Halo+%2Ates%2A&params[image][url]=http%3A%2F%2Fa.test%2Fb.png' +
          '&participants[]=1&participants[]=2&a[0][b]=x&a[1][b]=y&phones=1&phones=2',
      ),
    ).toEqual({
      receiver: '6289876543210',
      params: { text: 'Halo *tes*', image: { url: 'http://a.test/b.png' } },
      participants: ['1', '2'],
      a: [{ b: 'x' }, { b: 'y' }],
      // A plain name given twice is a list (as Python's clients send lists).
      phones: ['1', '2'],
    });
  });

  it('keeps text that is not valid percent-encoding as it came', () => {
    expect(parseFormFields('a=%ZZ&b=%E0%A4%A&c=')).toEqual({ a: '%ZZ', b: '%E0%A4%A', c: '' });
  });

  it('takes the JSON depth limit, counting the body as a level like JSON does', () => {
    // `x[a]…[a]=v` with n brackets is n + 1 levels: the body, then x and each [a] but the last.
    const name = (levels: number) => `x${'[a]'.repeat(levels - 1)}=v`;
    const atLimit = parseFormFields(name(MAX_JSON_DEPTH));
    expect(nestsDeeperThan(JSON.stringify(atLimit), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify(atLimit), MAX_JSON_DEPTH - 1)).toBe(true);
    expect(refusal(name(MAX_JSON_DEPTH + 1))).toEqual({
      body: [`must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`],
    });
  });

  it(`takes ${FORM_FIELD_LIMIT} fields and refuses one more`, () => {
    const fields = (count: number) => Array.from({ length: count }, (_, i) => `f${i}=1`).join('&');
    expect(Object.keys(parseFormFields(fields(FORM_FIELD_LIMIT)))).toHaveLength(FORM_FIELD_LIMIT);
    expect(refusal(fields(FORM_FIELD_LIMIT + 1))).toEqual({ body: [`must have at most ${FORM_FIELD_LIMIT} fields`] });
  });

  it(`takes lists of ${FORM_LIST_LIMIT} items and refuses longer ones and higher indexes`, () => {
    const list = (count: number, name = 'p[]') => Array.from({ length: count }, (_, i) => `${name}=${i}`).join('&');
    expect(parseFormFields(list(FORM_LIST_LIMIT)).p).toHaveLength(FORM_LIST_LIMIT);
    expect(parseFormFields(`p[${FORM_LIST_LIMIT - 1}]=x`)).toEqual({ p: ['x'] });
    const problem = {
      body: [`must not have a list of more than ${FORM_LIST_LIMIT} items, nor an index above ${FORM_LIST_LIMIT - 1}`],
    };
    expect(refusal(list(FORM_LIST_LIMIT + 1))).toEqual(problem);
    expect(refusal(`p[${FORM_LIST_LIMIT}]=x`)).toEqual(problem);
    expect(refusal('p[99999999]=x')).toEqual(problem);
    // An index past what a number holds exactly is a name, as in PHP: an object, which a list field refuses.
    expect(parseFormFields('p[9999999999999999999999]=x&q[0]=1')).toEqual({
      p: { '9999999999999999999999': 'x' },
      q: ['1'],
    });
  });

  it(`takes ${FORM_BRACKET_LIMIT} brackets in all names and refuses one more`, () => {
    // Names 8 levels deep: each bracket opens an object to build.
    const names = (brackets: number) =>
      Array.from({ length: Math.ceil(brackets / 8) }, (_, i) => {
        const depth = Math.min(8, brackets - i * 8);
        return `n${i}${'[a]'.repeat(depth)}=v`;
      }).join('&');
    expect(Object.keys(parseFormFields(names(FORM_BRACKET_LIMIT)))).toHaveLength(FORM_BRACKET_LIMIT / 8);
    const problem = { body: [`field names must have at most ${FORM_BRACKET_LIMIT} brackets in all`] };
    expect(refusal(names(FORM_BRACKET_LIMIT + 1))).toEqual(problem);
    // Brackets that never close count too: they are what makes qs work hardest.
    expect(refusal(`a=${'['.repeat(10)}&${'b'.repeat(3)}${'['.repeat(FORM_BRACKET_LIMIT + 1)}=1`)).toEqual(problem);
  });

  it.each([
    '__proto__[admin]=1',
    '__proto__=1',
    'a[__proto__][admin]=1',
    'constructor[prototype][admin]=1',
    'a[constructor]=1',
    'prototype=1',
    '%5F%5Fproto%5F%5F[admin]=1',
    'a%5B__proto__%5D=1',
    'ok=1&params[__proto__][x]=1',
  ])('refuses the name in %s and pollutes nothing', (text) => {
    expect(refusal(text)).toEqual({ body: ['field names must not use __proto__, constructor or prototype'] });
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('keeps other names that objects have as plain data', () => {
    const fields = parseFormFields('toString=1&hasOwnProperty=2&a[valueOf]=3');
    expect(Object.keys(fields)).toEqual(['toString', 'hasOwnProperty', 'a']);
    expect(fields.toString).toBe('1');
  });
});

describe('formValueAs', () => {
  const Body = Type.Object({
    phone: Type.String(),
    count: Type.Integer(),
    ratio: Type.Number(),
    flag: Type.Boolean(),
    url: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
    gap: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    list: Type.Array(Type.String()),
    numbers: Type.Array(Type.Integer()),
    nested: Type.Object({ on: Type.Boolean(), items: Type.Array(Type.Object({ n: Type.Number() })) }),
    free: Type.Unknown(),
    mode: Type.Union([Type.Literal('a'), Type.Literal('b')]),
  });

  it('reads texts as the types the schema places, and keeps text where it takes text', () => {
    expect(
      formValueAs(Body, {
        phone: '6281234567890',
        count: '12',
        ratio: '-6.25e1',
        flag: '1',
        url: '',
        gap: '',
        list: 'one',
        numbers: ['1', '2'],
        nested: { on: 'false', items: [{ n: '0.5' }] },
        free: '1',
        mode: 'a',
        unknown: '7',
      }),
    ).toEqual({
      phone: '6281234567890',
      count: 12,
      ratio: -62.5,
      flag: true,
      url: null,
      gap: null,
      list: ['one'],
      numbers: [1, 2],
      nested: { on: false, items: [{ n: 0.5 }] },
      free: '1',
      mode: 'a',
      unknown: '7',
    });
  });

  it.each([
    ['count', '0x10'],
    ['count', '1 '],
    ['count', '+1'],
    ['count', '1e999'],
    ['count', ''],
    ['ratio', 'NaN'],
    ['ratio', 'Infinity'],
    ['flag', 'yes'],
    ['flag', 'TRUE'],
    ['flag', ''],
  ])('leaves %s=%j as text, for validation to refuse', (field, text) => {
    expect((formValueAs(Body, { [field]: text }) as Record<string, unknown>)[field]).toBe(text);
  });

  it('reads the send body of each type by its own branch (simulate_typing, location, viewOnce, buttons)', () => {
    expect(
      formValueAs(SendBodySchema, {
        receiver: '6289876543210',
        simulate_typing: '1',
        params: {
          location: { degreesLatitude: '-6.2', degreesLongitude: '106.8' },
          viewOnce: 'true',
          text: '123',
          templateButtons: [{ index: '1', quickReplyButton: { id: '2', displayText: '3' } }],
        },
      }),
    ).toEqual({
      receiver: '6289876543210',
      simulate_typing: 1,
      params: {
        location: { degreesLatitude: -6.2, degreesLongitude: 106.8 },
        viewOnce: true,
        text: '123',
        templateButtons: [{ index: 1, quickReplyButton: { id: '2', displayText: '3' } }],
      },
    });
  });
});

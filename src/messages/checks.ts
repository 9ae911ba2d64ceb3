// Owns running the message schemas (src/messages/schemas.ts) and turning what the validator finds
// into findings: a dotted field path, the contract's error code and the words a client reads. The
// rules JSON Schema cannot express are implemented here once, as validator keywords (`x-text`,
// `x-check`, `x-unique`, `x-max-total`, `x-one-of-fields`, `x-distinct`, `x-at-most-count`). It must never do I/O, never let its work
// grow with the input beyond the limits it checks (items of an array over its count limit are not
// checked one by one), and never put a value taken from the request into a field path.
import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import { isPhoneNumber, typeWords } from '../shapes.js';
import { fileNameProblem, mimetypeProblem, urlFormProblem } from './forms.js';
import { CALL_NUMBER_RULE, type CheckName, type CheckRule, type TextRule, type ViolationCode } from './schemas.js';
import { exceedsCharacters, isBlank } from './text.js';

export interface Finding {
  /** Dotted path from the body's root. */
  readonly path: string;
  /** The path shown when the answer is the region's own code (list params: `sections.0.title`). */
  readonly short?: string;
  readonly code: ViolationCode;
  readonly message: string;
}

/** Phone rule 1 of spec 4.5, optionally with a leading `+` (the number is dialled by the recipient). */
export function isCallNumber(value: unknown): value is string {
  return typeof value === 'string' && isPhoneNumber(value.startsWith('+') ? value.slice(1) : value);
}

const CHECKS: Record<CheckName, (value: unknown) => string | null> = {
  url: (value) => (typeof value === 'string' ? urlFormProblem(value) : null),
  mimetype: (value) => (typeof value === 'string' ? mimetypeProblem(value) : null),
  fileName: (value) => (typeof value === 'string' ? fileNameProblem(value) : null),
  callNumber: (value) => (isCallNumber(value) ? null : CALL_NUMBER_RULE),
};

/** The one problem of a text under `rule`, or null. */
export function textProblem(value: string, rule: TextRule): { message: string; tooLong: boolean } | null {
  if (value.length === 0) return rule.required ? { message: 'must not be empty', tooLong: false } : null;
  if (rule.required && rule.identifier !== true && isBlank(value)) {
    return { message: 'must not be blank', tooLong: false };
  }
  if (exceedsCharacters(value, rule.max)) return { message: `must be at most ${rule.max} characters`, tooLong: true };
  return null;
}

interface KeywordError {
  keyword?: string;
  instancePath?: string;
  message: string;
  /** `firstAt`: a JSON pointer (from the validated value) that replaces `%s` in the message. */
  params: { code?: ViolationCode; firstAt?: string };
}

/** A schema object as the validator hands it to a keyword. */
type SchemaNode = Record<string, unknown>;

type KeywordFunction = ((
  schema: unknown,
  data: unknown,
  parent?: SchemaNode,
  cxt?: { instancePath: string },
) => boolean) & {
  errors?: KeywordError[];
};

/** The schema object under `key` of `node`, if any. */
const child = (node: unknown, key: string): SchemaNode | undefined => {
  const value = isRecord(node) ? node[key] : undefined;
  return isRecord(value) ? value : undefined;
};

/** A validator keyword from a check that answers its errors (none: valid). `S` is the keyword's value. */
function keyword<S>(
  name: string,
  check: (schema: S, data: unknown, parent: SchemaNode, cxt?: { instancePath: string }) => KeywordError[],
): KeywordFunction {
  const validate: KeywordFunction = (schema, data, parent, cxt) => {
    const errors = check(schema as S, data, parent ?? {}, cxt);
    if (errors.length === 0) return true;
    validate.errors = errors.map((error) => ({ ...error, keyword: name }));
    return false;
  };
  return validate;
}

const pointer = (instancePath: string, ...parts: Array<string | number>) =>
  [instancePath, ...parts.map(String)].join('/');
const dotted = (instancePath: string) =>
  instancePath
    .split('/')
    .filter((part) => part !== '')
    .join('.');

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = keyword('x-text', (rule: TextRule, data) => {
  if (typeof data !== 'string') return [];
  const problem = textProblem(data, rule);
  if (problem === null) return [];
  return [{ message: problem.message, params: problem.tooLong && rule.tooLong ? { code: rule.tooLong } : {} }];
});

const check = keyword('x-check', (rule: CheckRule, data) => {
  const { name, code } = typeof rule === 'string' ? { name: rule, code: undefined } : rule;
  const problem = CHECKS[name](data);
  if (problem === null) return [];
  return [{ message: problem, params: code === undefined ? {} : { code } }];
});

const oneOfFields = keyword('x-one-of-fields', (fields: readonly string[], data) => {
  if (!isRecord(data)) return [];
  const present = fields.filter((field) => Object.hasOwn(data, field) && data[field] !== undefined);
  if (present.length === 1) return [];
  return [{ message: `must have exactly one of ${fields.join(', ')}`, params: {} }];
});

/** `x-max-total` on an array of objects: the items' `items` arrays together hold at most `max`. */
const maxTotal = keyword('x-max-total', (rule: { items: string; max: number; message: string }, data) => {
  if (!Array.isArray(data)) return [];
  let total = 0;
  for (const item of data) {
    const inner = isRecord(item) ? item[rule.items] : undefined;
    if (Array.isArray(inner)) total += inner.length;
  }
  if (total <= rule.max) return [];
  return [{ message: rule.message, params: {} }];
});

/**
 * `x-unique` on an array (its items' `field`: template button indexes) or on list params (the
 * `rowId` of every row of every section). Each repeat is named where it comes again, with where
 * the value was first used. Only arrays within their count limits are looked at.
 */
const unique = keyword('x-unique', (field: string, data, parent, cxt) => {
  const base = cxt?.instancePath ?? '';
  const seen = new Map<unknown, string>();
  const errors: KeywordError[] = [];
  // The first use is named by its path from the validated value; findings() prefixes it like any path.
  const note = (value: unknown, itemPointer: string, firstPointer: string, message: string) => {
    const first = seen.get(value);
    if (first === undefined) seen.set(value, firstPointer);
    else errors.push({ instancePath: itemPointer, message, params: { firstAt: first } });
  };
  if (Array.isArray(data)) {
    if (typeof parent.maxItems === 'number' && data.length > parent.maxItems) return [];
    data.forEach((item, i) => {
      const value = isRecord(item) ? item[field] : undefined;
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) return;
      note(value, pointer(base, i, field), pointer(base, i), 'must be unique (already used by %s)');
    });
  } else if (isRecord(data)) {
    const sections = data.sections;
    const limits = child(child(parent, 'properties'), 'sections');
    const maxOf = (node: SchemaNode | undefined) => (typeof node?.maxItems === 'number' ? node.maxItems : Infinity);
    if (!Array.isArray(sections) || sections.length > maxOf(limits)) return [];
    // The validated schema moved `items` under `then` (see bounded()).
    const section = child(child(limits, 'then'), 'items') ?? child(limits, 'items');
    const rowsMax = maxOf(child(child(section, 'properties'), 'rows'));
    sections.forEach((section, s) => {
      const rows = isRecord(section) ? section.rows : undefined;
      if (!Array.isArray(rows) || rows.length > rowsMax) return;
      rows.forEach((row, r) => {
        const value = isRecord(row) ? row[field] : undefined;
        if (typeof value !== 'string' || value === '') return;
        const at = pointer(base, 'sections', s, 'rows', r, field);
        note(value, at, at, 'must be unique within the list (already used at %s)');
      });
    });
  }
  return errors;
});

/**
 * `x-distinct` on an array of texts (poll options): each repeat is named where it comes again, with the place
 * of its first use. Only an array within its count limit is looked at.
 */
const distinct = keyword('x-distinct', (_on: true, data, parent, cxt) => {
  if (!Array.isArray(data)) return [];
  if (typeof parent.maxItems === 'number' && data.length > parent.maxItems) return [];
  const base = cxt?.instancePath ?? '';
  const seen = new Map<string, number>();
  const errors: KeywordError[] = [];
  data.forEach((value, i) => {
    if (typeof value !== 'string') return;
    const first = seen.get(value);
    if (first === undefined) seen.set(value, i);
    else {
      errors.push({
        instancePath: pointer(base, i),
        message: 'must be different from every other option (the same as %s)',
        params: { firstAt: pointer(base, first) },
      });
    }
  });
  return errors;
});

/** `x-at-most-count` on an object: its integer `field`, when given, is at most the length of its array `of`. */
const atMostCount = keyword('x-at-most-count', (rule: { field: string; of: string }, data, _parent, cxt) => {
  if (!isRecord(data)) return [];
  const value = data[rule.field];
  const list = data[rule.of];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || !Array.isArray(list)) return [];
  if (value <= list.length) return [];
  return [
    {
      instancePath: pointer(cxt?.instancePath ?? '', rule.field),
      message: `must be at most the number of ${rule.of} (${list.length})`,
      params: {},
    },
  ];
});

const ajv = new Ajv({
  allErrors: true,
  verbose: true,
  strict: false,
  validateFormats: false,
  // NaN and Infinity are not numbers a coordinate can be (they cannot come from JSON, but from code).
  strictNumbers: true,
  coerceTypes: false,
  useDefaults: false,
  // No optimising pass over the generated code: 40 % less CPU to compile, as fast to run (docs/internals.md, Running and
  // operating).
  code: { optimize: false },
});
ajv.addKeyword({ keyword: 'x-text', type: 'string', errors: true, validate: text });
ajv.addKeyword({ keyword: 'x-check', errors: true, validate: check });
ajv.addKeyword({ keyword: 'x-one-of-fields', type: 'object', errors: true, validate: oneOfFields });
ajv.addKeyword({ keyword: 'x-max-total', type: 'array', errors: true, validate: maxTotal });
ajv.addKeyword({ keyword: 'x-unique', errors: true, validate: unique });
ajv.addKeyword({ keyword: 'x-distinct', type: 'array', errors: true, validate: distinct });
ajv.addKeyword({ keyword: 'x-at-most-count', type: 'object', errors: true, validate: atMostCount });
for (const name of ['x-code', 'x-messages']) ajv.addKeyword({ keyword: name });

/**
 * The schema as validated: every array with a count limit checks its items only when the count
 * holds, so a body with a hundred thousand sections costs one comparison, not a hundred thousand
 * item checks. The document shows the schema as written.
 */
function bounded(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(bounded);
  if (!isRecord(schema)) return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = bounded(value);
  if (copy.type === 'array' && typeof copy.maxItems === 'number' && copy.items !== undefined) {
    const { items } = copy;
    delete copy.items;
    copy.if = { maxItems: copy.maxItems };
    copy.then = { items };
  }
  return copy;
}

const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Compiles `schema` for findings(), once. Compiling takes a noticeable time: the message schemas are compiled soon
 * after the gateway listens, one per turn of the event loop (`compileMessageSchemasInTurns`, validate.ts); a request
 * that comes before compiles the schemas it needs here.
 */
export function compile(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(bounded(schema) as AnySchema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Whether `schema` was compiled already. */
export function isCompiled(schema: object): boolean {
  return compiled.has(schema);
}

function messageOf(error: ErrorObject, overrides: Record<string, string> | undefined): string {
  if (error.keyword === 'required') return 'is required';
  // The keywords of this module word their own findings.
  if (error.keyword.startsWith('x-')) return error.message ?? 'is invalid';
  const override = overrides?.[error.keyword] ?? overrides?.['*'];
  if (override !== undefined) return override;
  if (error.keyword === 'type') return `must be ${typeWords(String(error.params.type))}`;
  return error.message ?? 'is invalid';
}

export interface Region {
  /** Prefix of every path found (the JSON pointer of `data` in the body, dotted): `params`. */
  readonly at: string;
  /** Code of every finding that names no other: VALIDATION_FAILED, or INVALID_LIST in list params. */
  readonly code: ViolationCode;
  /**
   * Findings of the region's own code are shown relative to it when that code is the answer (list
   * params: `sections.0.title`, docs/internals.md, Sending), and in full beside other fields' findings.
   */
  readonly relative?: boolean;
}

/** Validates `data` against `schema`, answering every finding (empty when valid). */
export function findings(schema: object, data: unknown, region: Region): Finding[] {
  const validate = compile(schema);
  if (validate(data)) return [];
  const found: Finding[] = [];
  for (const error of validate.errors ?? []) {
    if (error.keyword === 'if') continue;
    const parent: SchemaNode = error.parentSchema ?? {};
    let path = dotted(error.instancePath);
    if (error.keyword === 'required') {
      path = path === '' ? String(error.params.missingProperty) : `${path}.${String(error.params.missingProperty)}`;
    }
    const within = (relative: string) =>
      region.at === '' ? relative : relative === '' ? region.at : `${region.at}.${relative}`;
    const full = within(path);
    const { code: ownCode, firstAt } = error.params as { code?: ViolationCode; firstAt?: string };
    const code: ViolationCode =
      ownCode ??
      (error.keyword === 'required' ? region.code : (parent['x-code'] as ViolationCode | undefined)) ??
      region.code;
    let message = messageOf(error, parent['x-messages'] as Record<string, string> | undefined);
    if (firstAt !== undefined) {
      message = message.replace('%s', region.relative ? dotted(firstAt) : within(dotted(firstAt)));
    }
    const at = full || 'body';
    found.push(region.relative && path !== '' ? { path: at, short: path, code, message } : { path: at, code, message });
  }
  return found;
}

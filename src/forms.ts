/**
 * Form bodies apart from HTTP (docs/internals.md, Whatspie compatibility: form bodies on every route):
 * the mark a body that came as a form carries, and what the text of a form field means where a
 * schema expects a number, a boolean, null or a list. The HTTP edge (src/http/forms.ts) parses
 * forms and marks them; services (the messages validator, which reads a send body once it is
 * canonical) read the mark and the texts from here, so they never import src/http/.
 *
 * A form carries only text: `simulate_typing=1`, `params[location][degreesLatitude]=-6.2`,
 * `params[viewOnce]=true`. JSON bodies are checked as sent (a number sent as
 * "5" is wrong there), so a form body is first read against the schema of the
 * route: a field's text becomes a number where the schema takes a number and
 * no text, a boolean where it takes a boolean (`true`/`1`, `false`/`0`: PHP's
 * http_build_query writes booleans as 1 and 0), null for an empty field where
 * the schema allows null (a form has no other way to say it), and a one-item list where it takes a
 * list (`phones=628…` as well as `phones[]=628…`). Anything else stays the text
 * it was, and validation then names the field as for JSON. Where the schema
 * takes text, text is kept whatever it looks like: a phone number is never
 * turned into a number.
 *
 * Owns: the form-body mark, and that reading, driven by the schema only.
 * Must never: import anything (it sits below every layer), parse a request, validate, refuse, or
 * change a value the schema does not place; its work is one walk of the value (bounded by the form
 * limits in src/http/forms.ts).
 */

const FORM_BODY = Symbol('form body');

/**
 * Marks `body` as one that came as a form. The mark is an enumerable symbol, so it survives a
 * spread (`{...body, device}`) but never shows in JSON, `Object.keys` or validation.
 */
export function markFormBody(body: Record<string, unknown>): void {
  Object.defineProperty(body, FORM_BODY, { value: true, enumerable: true });
}

/** True for a body that came as a form (markFormBody). */
export function isFormBody(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[FORM_BODY] === true;
}

type Schema = Record<string, unknown>;
type Kind = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON's number grammar: what a client would have written in a JSON body. */
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** How deep unions nest in a schema before the walk stops looking (TypeBox unions nest a level or two). */
const MAX_UNION_DEPTH = 8;

/** The alternatives a value may match at one place: the branches of anyOf/oneOf/allOf, flattened. */
function alternatives(schema: unknown, into: Schema[] = [], depth = 0): Schema[] {
  if (!isRecord(schema) || depth > MAX_UNION_DEPTH) return into;
  const branches = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  if (Array.isArray(branches)) {
    for (const branch of branches) alternatives(branch, into, depth + 1);
    return into;
  }
  into.push(schema);
  return into;
}

function kindOf(value: unknown): Kind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  if (type === 'number' || type === 'bigint') return 'number';
  if (type === 'boolean' || type === 'string') return type;
  return 'object';
}

/** The JSON kinds the alternatives accept, or null when one of them accepts anything. */
function kinds(alternativesHere: readonly Schema[]): Set<Kind> | null {
  const accepted = new Set<Kind>();
  for (const alternative of alternativesHere) {
    if (alternative.const !== undefined) {
      accepted.add(kindOf(alternative.const));
    } else if (Array.isArray(alternative.enum)) {
      for (const value of alternative.enum) accepted.add(kindOf(value));
    } else if (typeof alternative.type === 'string' || Array.isArray(alternative.type)) {
      const types = (Array.isArray(alternative.type) ? alternative.type : [alternative.type]) as string[];
      for (const type of types) accepted.add(type === 'integer' ? 'number' : (type as Kind));
    } else if (isRecord(alternative.properties)) {
      accepted.add('object');
    } else {
      return null;
    }
  }
  return accepted;
}

/** The schemas of `key` in the object alternatives (its property, else the schema of other properties). */
function propertySchemas(alternativesHere: readonly Schema[], key: string): Schema[] {
  const found: Schema[] = [];
  for (const alternative of alternativesHere) {
    const properties = alternative.properties;
    const own = isRecord(properties) && Object.hasOwn(properties, key) ? properties[key] : undefined;
    const other = isRecord(alternative.additionalProperties) ? alternative.additionalProperties : undefined;
    const patterns = isRecord(alternative.patternProperties) ? Object.values(alternative.patternProperties) : [];
    for (const schema of [own ?? other, ...(own === undefined && other === undefined ? patterns : [])]) {
      alternatives(schema, found);
    }
  }
  return found;
}

function itemSchemas(alternativesHere: readonly Schema[]): Schema[] {
  const found: Schema[] = [];
  for (const alternative of alternativesHere) alternatives(alternative.items, found);
  return found;
}

function readText(text: string, alternativesHere: readonly Schema[]): unknown {
  const accepted = kinds(alternativesHere);
  if (accepted === null) return text;
  // A form cannot say null: an empty field says it where the schema allows it (`webhook_url=` stops deliveries).
  if (text === '' && accepted.has('null')) return null;
  if (accepted.has('string')) return text;
  if (accepted.has('number') && NUMBER.test(text)) {
    const number = Number(text);
    if (Number.isFinite(number)) return number;
  }
  if (accepted.has('boolean')) {
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
  }
  if (accepted.has('array')) return [read(text, itemSchemas(alternativesHere))];
  return text;
}

function read(value: unknown, alternativesHere: readonly Schema[]): unknown {
  if (alternativesHere.length === 0) return value;
  if (typeof value === 'string') return readText(value, alternativesHere);
  if (Array.isArray(value)) {
    const items = itemSchemas(alternativesHere);
    return items.length === 0 ? value : value.map((item: unknown) => read(item, items));
  }
  if (!isRecord(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // Defined, not assigned: a `__proto__` key (refused before, in forms.ts) could never set a prototype here.
    Object.defineProperty(copy, key, {
      value: read(value[key], propertySchemas(alternativesHere, key)),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/**
 * A form body (or a part of one) read against `schema`: the same value, with the texts the schema
 * places as numbers, booleans, null or lists turned into them. Other values are returned as they were.
 */
export function formValueAs(schema: unknown, value: unknown): unknown {
  return read(value, alternatives(schema));
}

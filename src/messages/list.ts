// Owns what a valid list message becomes (its rules, spec 2.4 and 8 and docs/internals.md, Sending, are in
// src/messages/schemas.ts): only the known fields, an empty footer or description treated as none.
// Also validates list params on their own, against other limits if asked (tests reach rules that
// the default limits shadow). It must never do I/O.
import type { NetworkMessageContent } from '../network/network.js';
import { findings } from './checks.js';
import { LIST_LIMITS, type ListLimits } from './limits.js';
import { refusal } from './problems.js';
import { listParamsSchema, ListParams, type ListParamsBody } from './schemas.js';
import { canonicalBody, isRecord } from './canonical.js';

type ListContent = Extract<NetworkMessageContent, { type: 'list' }>;

interface Row {
  title: string;
  rowId: string;
  description?: string;
}

interface Section {
  title: string;
  rows: Row[];
}

export interface ParsedList {
  /** Normalised params, as stored and echoed: only the known fields. */
  params: { title: string; text: string; footer?: string; buttonText: string; sections: Section[] };
  content: ListContent;
}

const optional = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/** The list of valid canonical params (src/messages/schemas.ts checked them). */
export function buildList(valid: Record<string, unknown>): ParsedList {
  const params = valid as ListParamsBody;
  const footer = optional(params.footer);
  const sections: Section[] = params.sections.map((section) => ({
    title: section.title,
    rows: section.rows.map((row) => {
      const description = optional(row.description);
      const base = { title: row.title, rowId: row.rowId };
      return description === undefined ? base : { ...base, description };
    }),
  }));
  const normalised = {
    title: params.title,
    text: params.text,
    ...(footer === undefined ? {} : { footer }),
    buttonText: params.buttonText,
    sections,
  };
  return { params: normalised, content: { type: 'list', ...normalised } };
}

const schemas = new WeakMap<ListLimits, object>([[LIST_LIMITS, ListParams]]);

/** Validates list params on their own: throws ApiError INVALID_LIST naming every violation. */
export function validateListParams(params: unknown, limits: ListLimits = LIST_LIMITS): ParsedList {
  if (!isRecord(params)) throw refusal([{ path: 'params', code: 'INVALID_LIST', message: 'must be an object' }]);
  let schema = schemas.get(limits);
  if (schema === undefined) {
    schema = listParamsSchema(limits);
    schemas.set(limits, schema);
  }
  const canonical = canonicalBody({ params }).body.params as Record<string, unknown>;
  const found = findings(schema, canonical, { at: 'params', code: 'INVALID_LIST', relative: true });
  if (found.length > 0) throw refusal(found);
  return buildList(canonical);
}

// Owns the rules of a list message's params (spec 2.4 and 8, DECISIONS 5): required fields,
// length limits, section and row counts, unique row ids. Every violation is an `Invalid list
// parameters` naming its path relative to params (`sections.0.rows.3.title`), and all of them are
// reported, not only the first. It must never do I/O or accept a list the network would refuse.
import type { NetworkMessageContent } from '../network/network.js';
import { LIST_LIMITS, type ListLimits } from './limits.js';
import { field, isRecord, join, Problems, readText } from './problems.js';

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
  params: {
    title: string;
    text: string;
    footer?: string;
    buttonText: string;
    sections: Section[];
  };
  content: ListContent;
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/**
 * Reads list params, recording every violation in `problems` as INVALID_LIST. The result is only
 * meaningful when nothing was recorded. `limits` is a parameter so tests can reach rules that the
 * other limits shadow (with 10 sections of 10 rows, 101 rows in total cannot happen).
 */
export function parseList(
  params: Record<string, unknown>,
  problems: Problems,
  limits: ListLimits = LIST_LIMITS,
): ParsedList {
  const code = 'INVALID_LIST';
  const text = (path: string, value: unknown, max: number, required = true, identifier = false) =>
    readText(problems, path, value, { max, required, code, identifier }) ?? '';

  const title = text('title', field(params, 'title'), limits.title);
  const body = text('text', field(params, 'text'), limits.text);
  const footer = readText(problems, 'footer', field(params, 'footer'), { max: limits.footer, required: false, code });
  const buttonText = text('buttonText', field(params, 'buttonText'), limits.buttonText);

  const sections: Section[] = [];
  const rawSections = field(params, 'sections');
  if (rawSections === undefined) {
    problems.add(code, 'sections', 'is required');
  } else if (!Array.isArray(rawSections)) {
    problems.add(code, 'sections', 'must be an array');
  } else {
    // Aggregate problems first: they must not be crowded out of the report by item problems.
    if (rawSections.length === 0) problems.add(code, 'sections', 'must have at least 1 section');
    if (rawSections.length > limits.sections) {
      problems.add(code, 'sections', `must have at most ${plural(limits.sections, 'section')}`);
    }
    const totalRows = rawSections.reduce<number>((sum, section) => {
      const rows = isRecord(section) ? field(section, 'rows') : undefined;
      return sum + (Array.isArray(rows) ? rows.length : 0);
    }, 0);
    if (totalRows > limits.rowsTotal) {
      problems.add(code, 'sections', `must have at most ${plural(limits.rowsTotal, 'row')} in total`);
    }

    /** Where each row id was first used, to name it when it comes again. */
    const rowIds = new Map<string, string>();
    rawSections.forEach((rawSection: unknown, s) => {
      const sectionPath = join('sections', s);
      if (!isRecord(rawSection)) {
        problems.add(code, sectionPath, 'must be an object');
        return;
      }
      const sectionTitle = text(join(sectionPath, 'title'), field(rawSection, 'title'), limits.sectionTitle);
      const rows: Row[] = [];
      const rowsPath = join(sectionPath, 'rows');
      const rawRows = field(rawSection, 'rows');
      if (rawRows === undefined) {
        problems.add(code, rowsPath, 'is required');
      } else if (!Array.isArray(rawRows)) {
        problems.add(code, rowsPath, 'must be an array');
      } else {
        if (rawRows.length === 0) problems.add(code, rowsPath, 'must have at least 1 row');
        if (rawRows.length > limits.rowsPerSection) {
          problems.add(code, rowsPath, `must have at most ${plural(limits.rowsPerSection, 'row')}`);
        }
        rawRows.forEach((rawRow: unknown, r) => {
          const rowPath = join(rowsPath, r);
          if (!isRecord(rawRow)) {
            problems.add(code, rowPath, 'must be an object');
            return;
          }
          const rowTitle = text(join(rowPath, 'title'), field(rawRow, 'title'), limits.rowTitle);
          const idPath = join(rowPath, 'rowId');
          const rowId = text(idPath, field(rawRow, 'rowId'), limits.rowId, true, true);
          if (rowId !== '') {
            const first = rowIds.get(rowId);
            if (first === undefined) rowIds.set(rowId, idPath);
            else problems.add(code, idPath, `must be unique within the list (already used at ${first})`);
          }
          const description = readText(problems, join(rowPath, 'description'), field(rawRow, 'description'), {
            max: limits.rowDescription,
            required: false,
            code,
          });
          rows.push(description === undefined ? { title: rowTitle, rowId } : { title: rowTitle, rowId, description });
        });
      }
      sections.push({ title: sectionTitle, rows });
    });
  }

  const normalised = { title, text: body, ...(footer === undefined ? {} : { footer }), buttonText, sections };
  return { params: normalised, content: { type: 'list', ...normalised } };
}

/** Validates list params on their own: throws ApiError INVALID_LIST naming every violation. */
export function validateListParams(params: unknown, limits: ListLimits = LIST_LIMITS): ParsedList {
  const problems = new Problems();
  if (!isRecord(params)) {
    problems.add('INVALID_LIST', 'params', 'must be an object');
    problems.throwIfAny();
  }
  const parsed = parseList(params as Record<string, unknown>, problems, limits);
  problems.throwIfAny();
  return parsed;
}

// Owns the rules of a template (button) message's params (DECISIONS 5): the text, the footer and
// one to three buttons, each a link, a call or a quick reply. Violations are `Validation failed`
// naming the full path (`params.templateButtons.1.urlButton.url`). It must never do I/O: a button
// URL is only checked for its form, since the recipient, not the gateway, opens it.
import type { NetworkMessageContent, TemplateButton } from '../network/network.js';
import { isPhoneNumber } from '../http/schemas.js';
import { urlFormProblem } from './forms.js';
import { TEMPLATE_LIMITS } from './limits.js';
import { field, isRecord, join, readText, type Problems } from './problems.js';

type TemplateContent = Extract<NetworkMessageContent, { type: 'template' }>;

export interface ParsedTemplate {
  params: { text: string; footer?: string; templateButtons: TemplateButton[] };
  content: TemplateContent;
}

export const BUTTON_KINDS = ['urlButton', 'callButton', 'quickReplyButton'] as const;
type ButtonKind = (typeof BUTTON_KINDS)[number];

const code = 'VALIDATION_FAILED';

/** Phone rule 1 of spec 4.5, optionally with a leading `+` (the number is dialled by the recipient). */
export function isCallNumber(value: unknown): value is string {
  return typeof value === 'string' && isPhoneNumber(value.startsWith('+') ? value.slice(1) : value);
}

function readButton(problems: Problems, path: string, raw: Record<string, unknown>): TemplateButton | undefined {
  let index: number | undefined;
  const rawIndex = field(raw, 'index');
  const indexPath = join(path, 'index');
  if (rawIndex === undefined) problems.add(code, indexPath, 'is required');
  else if (typeof rawIndex !== 'number' || !Number.isSafeInteger(rawIndex) || rawIndex < 1) {
    problems.add(code, indexPath, 'must be an integer of at least 1');
  } else index = rawIndex;

  const kinds = BUTTON_KINDS.filter((kind) => field(raw, kind) !== undefined);
  if (kinds.length !== 1) {
    problems.add(code, path, `must have exactly one of ${BUTTON_KINDS.join(', ')}`);
    return undefined;
  }
  const kind = kinds[0] as ButtonKind;
  const kindPath = join(path, kind);
  const body = field(raw, kind);
  if (!isRecord(body)) {
    problems.add(code, kindPath, 'must be an object');
    return undefined;
  }
  const displayText = readText(problems, join(kindPath, 'displayText'), field(body, 'displayText'), {
    max: TEMPLATE_LIMITS.displayText,
    required: true,
    code,
  });

  let button: TemplateButton | undefined;
  if (kind === 'urlButton') {
    const urlPath = join(kindPath, 'url');
    const url = field(body, 'url');
    const problem =
      url === undefined ? 'is required' : typeof url === 'string' ? urlFormProblem(url) : 'must be a string';
    if (problem !== null) problems.add(code, urlPath, problem);
    else if (index !== undefined && displayText !== undefined) {
      button = { index, urlButton: { displayText, url: url as string } };
    }
  } else if (kind === 'callButton') {
    const phonePath = join(kindPath, 'phoneNumber');
    const phoneNumber = field(body, 'phoneNumber');
    if (phoneNumber === undefined) problems.add(code, phonePath, 'is required');
    else if (!isCallNumber(phoneNumber)) {
      problems.add(code, phonePath, 'must be a phone number in international format: country code first, digits only');
    } else if (index !== undefined && displayText !== undefined) {
      button = { index, callButton: { displayText, phoneNumber } };
    }
  } else {
    const id = readText(problems, join(kindPath, 'id'), field(body, 'id'), {
      max: TEMPLATE_LIMITS.replyId,
      required: true,
      code,
      identifier: true,
    });
    if (id !== undefined && index !== undefined && displayText !== undefined) {
      button = { index, quickReplyButton: { displayText, id } };
    }
  }
  return button;
}

/** Reads template params, recording violations; the result is only meaningful when nothing was recorded. */
export function parseTemplate(params: Record<string, unknown>, problems: Problems): ParsedTemplate {
  const text =
    readText(problems, 'params.text', field(params, 'text'), { max: TEMPLATE_LIMITS.text, required: true, code }) ?? '';
  const footer = readText(problems, 'params.footer', field(params, 'footer'), {
    max: TEMPLATE_LIMITS.footer,
    required: false,
    code,
  });

  const buttons: TemplateButton[] = [];
  const listPath = 'params.templateButtons';
  const raw = field(params, 'templateButtons');
  if (raw === undefined) problems.add(code, listPath, 'is required');
  else if (!Array.isArray(raw)) problems.add(code, listPath, 'must be an array');
  else {
    if (raw.length === 0) problems.add(code, listPath, 'must have at least 1 button');
    if (raw.length > TEMPLATE_LIMITS.buttons) {
      problems.add(code, listPath, `must have at most ${TEMPLATE_LIMITS.buttons} buttons`);
    }
    /** Where each index was first used: the index orders the buttons, so it must be unique. */
    const indexes = new Map<number, string>();
    raw.forEach((item: unknown, i) => {
      const path = join(listPath, i);
      if (!isRecord(item)) {
        problems.add(code, path, 'must be an object');
        return;
      }
      const index = field(item, 'index');
      if (typeof index === 'number' && Number.isSafeInteger(index) && index >= 1) {
        const first = indexes.get(index);
        if (first === undefined) indexes.set(index, path);
        else problems.add(code, join(path, 'index'), `must be unique (already used by ${first})`);
      }
      const button = readButton(problems, path, item);
      if (button !== undefined) buttons.push(button);
    });
  }

  const normalised = { text, ...(footer === undefined ? {} : { footer }), templateButtons: buttons };
  return {
    params: normalised,
    content: { type: 'template', text, ...(footer === undefined ? {} : { footer }), buttons },
  };
}

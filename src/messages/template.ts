// Owns what a valid template (button) message becomes (its rules are in src/messages/schemas.ts):
// the text, the footer when given, and each button with only the fields of its kind. It must
// never do I/O: a button URL is only checked for its form, since the recipient opens it.
import type { NetworkMessageContent, TemplateButton } from '../network/network.js';
import type { TemplateParamsBody } from './schemas.js';

type TemplateContent = Extract<NetworkMessageContent, { type: 'template' }>;

export interface BuiltTemplate {
  params: { text: string; footer?: string; templateButtons: TemplateButton[] };
  content: TemplateContent;
}

type ButtonBody = TemplateParamsBody['templateButtons'][number];

/** The button of a valid canonical one: exactly one kind (the schema checked it). */
function buildButton(raw: ButtonBody): TemplateButton {
  const { index, urlButton, callButton, quickReplyButton } = raw;
  if (urlButton !== undefined) return { index, urlButton: { displayText: urlButton.displayText, url: urlButton.url } };
  if (callButton !== undefined) {
    return { index, callButton: { displayText: callButton.displayText, phoneNumber: callButton.phoneNumber } };
  }
  const reply = quickReplyButton as NonNullable<ButtonBody['quickReplyButton']>;
  return { index, quickReplyButton: { displayText: reply.displayText, id: reply.id } };
}

/** The template of valid canonical params (src/messages/schemas.ts checked them). */
export function buildTemplate(valid: Record<string, unknown>): BuiltTemplate {
  const params = valid as TemplateParamsBody;
  const text = params.text;
  const footer = typeof params.footer === 'string' && params.footer !== '' ? params.footer : undefined;
  const buttons = params.templateButtons.map(buildButton);
  return {
    params: { text, ...(footer === undefined ? {} : { footer }), templateButtons: buttons },
    content: { type: 'template', text, ...(footer === undefined ? {} : { footer }), buttons },
  };
}

/**
 * `list` and `template` on WhatsApp (docs/internals.md, WhatsApp and sandbox accounts). Pure.
 *
 * Owns: the text a list or template is delivered as (WhatsApp no longer shows
 * the interactive forms sent from a linked device: they are accepted and then
 * never rendered), the choices that text offers and how a reply picks one
 * (its number, or a choice's title, case-insensitively), and the experimental
 * native form (`GATEWAY_WHATSAPP_NATIVE_INTERACTIVE=true`).
 * Must never: read a reply as a choice unless it is exactly a number offered
 * or a title offered; guess at anything else a person may type.
 */
import type { BinaryNode, proto } from 'baileys';
import type { IncomingContent, NetworkMessageContent, TemplateButton } from '../network.js';

export type InteractiveContent = Extract<NetworkMessageContent, { type: 'list' | 'template' }>;

export const LIST_REPLY_HINT = 'Reply with a number to choose.';

/** How long a reply can still pick from what was offered (docs/internals.md, WhatsApp and sandbox accounts). */
export const OFFER_TTL_MS = 24 * 60 * 60 * 1000;

/** Bold or italic in WhatsApp's markup only holds when no space sits inside the markers. */
const marked = (marker: string, text: string) => `${marker}${text.trim()}${marker}`;

function buttonLine(button: TemplateButton, n: number): string {
  if ('urlButton' in button) return `${button.urlButton.displayText}: ${button.urlButton.url}`;
  if ('callButton' in button) return `${button.callButton.displayText}: ${button.callButton.phoneNumber}`;
  return `${n}. ${button.quickReplyButton.displayText}`;
}

/**
 * The text a `list` or `template` is delivered as: the title in bold, the text, each section title in
 * bold with its rows numbered 1. to N. across sections (a description after a dash), template buttons
 * as lines (quick replies numbered), the footer in italics, and the closing hint when there is
 * something to choose.
 */
export function interactiveAsText(content: InteractiveContent): string {
  const lines: string[] = [];
  if (content.type === 'list') {
    if (content.title.trim() !== '') lines.push(marked('*', content.title));
    lines.push(content.text);
    let n = 0;
    for (const section of content.sections) {
      lines.push('');
      if (section.title.trim() !== '') lines.push(marked('*', section.title));
      for (const row of section.rows) {
        n += 1;
        lines.push(row.description ? `${n}. ${row.title} — ${row.description}` : `${n}. ${row.title}`);
      }
    }
    if (content.footer) lines.push('', marked('_', content.footer));
    lines.push('', LIST_REPLY_HINT);
    return lines.join('\n');
  }
  lines.push(content.text, '');
  let quick = 0;
  for (const button of content.buttons) {
    if ('quickReplyButton' in button) quick += 1;
    lines.push(buttonLine(button, quick));
  }
  if (content.footer) lines.push('', marked('_', content.footer));
  if (quick > 0) lines.push('', LIST_REPLY_HINT);
  return lines.join('\n');
}

/** What a text-rendered list or template offered, in the order of its numbers. */
export interface Offer {
  readonly kind: 'list' | 'buttons';
  /** [id, title]: a row's `rowId` and title, or a quick reply's `id` and display text. */
  readonly choices: ReadonlyArray<readonly [string, string]>;
}

/** The choices the text form offers; null when there is nothing to choose (a template of links and calls only). */
export function offerOf(content: InteractiveContent): Offer | null {
  if (content.type === 'list') {
    const choices = content.sections.flatMap((s) => s.rows.map((r) => [r.rowId, r.title] as const));
    return choices.length === 0 ? null : { kind: 'list', choices };
  }
  const choices = content.buttons.flatMap((b) =>
    'quickReplyButton' in b ? [[b.quickReplyButton.id, b.quickReplyButton.displayText] as const] : [],
  );
  return choices.length === 0 ? null : { kind: 'buttons', choices };
}

export function encodeOffer(offer: Offer): Buffer {
  return Buffer.from(JSON.stringify({ v: 1, kind: offer.kind, choices: offer.choices }), 'utf8');
}

/** The offer behind stored bytes; null when they are not one (a later format, or damage). */
export function decodeOffer(bytes: Uint8Array): Offer | null {
  try {
    const value = JSON.parse(Buffer.from(bytes).toString('utf8')) as {
      v?: unknown;
      kind?: unknown;
      choices?: unknown;
    };
    if (value.v !== 1 || (value.kind !== 'list' && value.kind !== 'buttons') || !Array.isArray(value.choices)) {
      return null;
    }
    const choices = value.choices.filter(
      (c): c is [string, string] =>
        Array.isArray(c) && c.length === 2 && typeof c[0] === 'string' && typeof c[1] === 'string',
    );
    return choices.length === value.choices.length ? { kind: value.kind, choices } : null;
  } catch {
    return null;
  }
}

/** Longest reply worth looking up: a number, or a title (WhatsApp's own titles are at most 24 characters). */
export const MAX_CHOICE_REPLY = 100;

const fold = (text: string) => text.trim().normalize('NFC').toLowerCase();

/**
 * The choice a reply picks: exactly one of the numbers offered (surrounding spaces aside, no leading
 * zeros), or exactly a choice's title, ignoring case (the first such choice). Null for anything else.
 */
export function pickChoice(offer: Offer, reply: string): IncomingContent | null {
  const text = reply.trim();
  let picked: readonly [string, string] | undefined;
  if (/^[1-9][0-9]{0,3}$/.test(text)) {
    picked = offer.choices[Number(text) - 1];
  } else if (text !== '' && text.length <= MAX_CHOICE_REPLY) {
    const wanted = fold(text);
    picked = offer.choices.find(([, title]) => fold(title) === wanted);
  }
  if (picked === undefined) return null;
  const [id, title] = picked;
  return offer.kind === 'list'
    ? { type: 'list_reply', rowId: id, title }
    : { type: 'button_reply', id, displayText: title };
}

// --- the native form (experimental) ------------------------------------------------

function nativeButtons(
  content: InteractiveContent,
): proto.Message.InteractiveMessage.NativeFlowMessage.INativeFlowButton[] {
  if (content.type === 'list') {
    const sections = content.sections.map((section) => ({
      title: section.title,
      rows: section.rows.map((row) => ({
        id: row.rowId,
        title: row.title,
        ...(row.description ? { description: row.description } : {}),
      })),
    }));
    return [{ name: 'single_select', buttonParamsJson: JSON.stringify({ title: content.buttonText, sections }) }];
  }
  return content.buttons.map((button) => {
    if ('quickReplyButton' in button) {
      const { displayText, id } = button.quickReplyButton;
      return { name: 'quick_reply', buttonParamsJson: JSON.stringify({ display_text: displayText, id }) };
    }
    if ('urlButton' in button) {
      const { displayText, url } = button.urlButton;
      return {
        name: 'cta_url',
        buttonParamsJson: JSON.stringify({ display_text: displayText, url, merchant_url: url }),
      };
    }
    const { displayText, phoneNumber } = button.callButton;
    return {
      name: 'cta_call',
      buttonParamsJson: JSON.stringify({ display_text: displayText, phone_number: phoneNumber }),
    };
  });
}

/**
 * The interactive ("native flow") message WhatsApp's own business clients send, wrapped as they wrap
 * it. Whether a phone renders it is not in the gateway's hands: experimental, see docs/whatsapp.md.
 */
export function nativeInteractive(content: InteractiveContent): proto.IMessage {
  const title = content.type === 'list' ? content.title.trim() : '';
  return {
    viewOnceMessage: {
      message: {
        messageContextInfo: { deviceListMetadata: {}, deviceListMetadataVersion: 2 },
        interactiveMessage: {
          ...(title === '' ? {} : { header: { title, hasMediaAttachment: false } }),
          body: { text: content.text },
          ...(content.footer ? { footer: { text: content.footer } } : {}),
          nativeFlowMessage: { buttons: nativeButtons(content), messageVersion: 1 },
        },
      },
    },
  };
}

/** The stanza node that marks a message as interactive; without it WhatsApp accepts the message and shows nothing. */
export const NATIVE_FLOW_NODES: BinaryNode[] = [
  {
    tag: 'biz',
    attrs: {},
    content: [
      {
        tag: 'interactive',
        attrs: { type: 'native_flow', v: '1' },
        content: [{ tag: 'native_flow', attrs: { v: '9', name: 'mixed' } }],
      },
    ],
  },
];

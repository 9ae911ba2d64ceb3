// docs/internals.md, WhatsApp and sandbox accounts: list and template on WhatsApp go as formatted text with
// numbered choices; a reply that is exactly a number offered or a title
// offered (case-insensitively) picks that choice. The native form is only
// built on request (experimental).
import { describe, expect, it } from 'vitest';
import {
  LIST_REPLY_HINT,
  NATIVE_FLOW_NODES,
  decodeOffer,
  encodeOffer,
  interactiveAsText,
  nativeInteractive,
  offerOf,
  pickChoice,
  type InteractiveContent,
} from '../../../src/network/whatsapp/interactive.js';

const LIST: InteractiveContent = {
  type: 'list',
  title: 'Menu',
  text: 'Pick one',
  footer: 'Thanks',
  buttonText: 'Open',
  sections: [
    {
      title: 'Food',
      rows: [
        { title: 'Rice', rowId: 'r1', description: 'hot' },
        { title: 'Tea', rowId: 'r2' },
      ],
    },
    { title: 'Drinks', rows: [{ title: 'Café Crème', rowId: 'r3', description: 'with milk' }] },
  ],
};

const TEMPLATE: InteractiveContent = {
  type: 'template',
  text: 'How can we help?',
  footer: 'Support team',
  buttons: [
    { index: 1, urlButton: { displayText: 'Website', url: 'https://example.com/help' } },
    { index: 2, quickReplyButton: { displayText: 'Order status', id: 'status' } },
    { index: 3, callButton: { displayText: 'Call us', phoneNumber: '6281234567890' } },
    { index: 4, quickReplyButton: { displayText: 'Agent', id: 'agent' } },
  ],
};

describe('list and template as text', () => {
  it('a list: title bold, text, section titles bold, rows numbered across sections, footer italic, the hint', () => {
    expect(interactiveAsText(LIST)).toBe(
      [
        '*Menu*',
        'Pick one',
        '',
        '*Food*',
        '1. Rice — hot',
        '2. Tea',
        '',
        '*Drinks*',
        '3. Café Crème — with milk',
        '',
        '_Thanks_',
        '',
        'Reply with a number to choose.',
      ].join('\n'),
    );
    expect(LIST_REPLY_HINT).toBe('Reply with a number to choose.');
  });

  it('markers hug the words (spaces inside them break WhatsApp bold); no footer, no footer line', () => {
    const text = interactiveAsText({
      ...LIST,
      title: ' Menu ',
      footer: undefined,
      sections: [{ title: ' Food ', rows: [{ title: 'Rice', rowId: 'r1' }] }],
    });
    expect(text).toBe(['*Menu*', 'Pick one', '', '*Food*', '1. Rice', '', LIST_REPLY_HINT].join('\n'));
  });

  it('a template: its text, each button a line (links and calls as "text: target", quick replies numbered)', () => {
    expect(interactiveAsText(TEMPLATE)).toBe(
      [
        'How can we help?',
        '',
        'Website: https://example.com/help',
        '1. Order status',
        'Call us: 6281234567890',
        '2. Agent',
        '',
        '_Support team_',
        '',
        LIST_REPLY_HINT,
      ].join('\n'),
    );
  });

  it('a template with nothing to choose has no hint and offers nothing', () => {
    const links: InteractiveContent = { type: 'template', text: 'See', buttons: [TEMPLATE.buttons[0]!] };
    expect(interactiveAsText(links)).toBe('See\n\nWebsite: https://example.com/help');
    expect(offerOf(links)).toBeNull();
  });
});

describe('reading a reply back as a choice', () => {
  const list = offerOf(LIST)!;
  const buttons = offerOf(TEMPLATE)!;

  it('offers rows in the order of their numbers, and quick replies only', () => {
    expect(list).toEqual({
      kind: 'list',
      choices: [
        ['r1', 'Rice'],
        ['r2', 'Tea'],
        ['r3', 'Café Crème'],
      ],
    });
    expect(buttons).toEqual({
      kind: 'buttons',
      choices: [
        ['status', 'Order status'],
        ['agent', 'Agent'],
      ],
    });
    expect(decodeOffer(encodeOffer(list))).toEqual(list);
  });

  it.each([
    ['1', { type: 'list_reply', rowId: 'r1', title: 'Rice' }],
    ['3', { type: 'list_reply', rowId: 'r3', title: 'Café Crème' }],
    [' 2 ', { type: 'list_reply', rowId: 'r2', title: 'Tea' }],
    ['tea', { type: 'list_reply', rowId: 'r2', title: 'Tea' }],
    ['CAFÉ CRÈME', { type: 'list_reply', rowId: 'r3', title: 'Café Crème' }],
    // The same title typed with a combining accent (another Unicode form).
    ['Cafe\u0301 Cre\u0300me', { type: 'list_reply', rowId: 'r3', title: 'Café Crème' }],
    ['0', null],
    ['4', null],
    ['01', null],
    ['1.', null],
    ['1 please', null],
    ['Rice please', null],
    ['', null],
  ])('list: %j', (reply, expected) => {
    expect(pickChoice(list, reply)).toEqual(expected);
  });

  it.each([
    ['1', { type: 'button_reply', id: 'status', displayText: 'Order status' }],
    ['2', { type: 'button_reply', id: 'agent', displayText: 'Agent' }],
    ['order STATUS', { type: 'button_reply', id: 'status', displayText: 'Order status' }],
    ['3', null],
    ['Website', null],
  ])('template: %j', (reply, expected) => {
    expect(pickChoice(buttons, reply)).toEqual(expected);
  });

  it.each([
    ['not JSON', Buffer.from('{')],
    ['a later format', Buffer.from(JSON.stringify({ v: 2, kind: 'list', choices: [] }))],
    ['damaged choices', Buffer.from(JSON.stringify({ v: 1, kind: 'list', choices: [['r1']] }))],
  ])('stored bytes that are not an offer (%s) are none', (_what, bytes) => {
    expect(decodeOffer(bytes)).toBeNull();
  });
});

describe('the native form (experimental)', () => {
  it('a list: one single_select button carrying the sections; the stanza carries the interactive node', () => {
    const message = nativeInteractive(LIST);
    const interactive = message.viewOnceMessage?.message?.interactiveMessage;
    expect(interactive?.header).toEqual({ title: 'Menu', hasMediaAttachment: false });
    expect(interactive?.body).toEqual({ text: 'Pick one' });
    expect(interactive?.footer).toEqual({ text: 'Thanks' });
    const [button] = interactive?.nativeFlowMessage?.buttons ?? [];
    expect(button?.name).toBe('single_select');
    expect(JSON.parse(button!.buttonParamsJson!)).toEqual({
      title: 'Open',
      sections: [
        {
          title: 'Food',
          rows: [
            { id: 'r1', title: 'Rice', description: 'hot' },
            { id: 'r2', title: 'Tea' },
          ],
        },
        { title: 'Drinks', rows: [{ id: 'r3', title: 'Café Crème', description: 'with milk' }] },
      ],
    });
    expect(NATIVE_FLOW_NODES[0]).toMatchObject({ tag: 'biz', content: [{ tag: 'interactive' }] });
  });

  it('a template: a button per kind, in order', () => {
    const buttons =
      nativeInteractive(TEMPLATE).viewOnceMessage?.message?.interactiveMessage?.nativeFlowMessage?.buttons;
    expect(buttons?.map((b) => [b.name, JSON.parse(b.buttonParamsJson!)])).toEqual([
      [
        'cta_url',
        { display_text: 'Website', url: 'https://example.com/help', merchant_url: 'https://example.com/help' },
      ],
      ['quick_reply', { display_text: 'Order status', id: 'status' }],
      ['cta_call', { display_text: 'Call us', phone_number: '6281234567890' }],
      ['quick_reply', { display_text: 'Agent', id: 'agent' }],
    ]);
  });
});

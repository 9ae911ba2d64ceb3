// Owns what a valid contact or poll message becomes (DECISIONS 15; their rules are in
// src/messages/schemas-sticker-contact-poll.ts): the params as stored and echoed, and the network content.
// It must never do I/O or make the network's form of them (a vCard is the WhatsApp connector's to write).
import type { NetworkMessageContent } from '../network/network.js';

type ContactContent = Extract<NetworkMessageContent, { type: 'contact' }>;
type PollContent = Extract<NetworkMessageContent, { type: 'poll' }>;

export interface BuiltContact {
  params: { contacts: Array<{ name: string; phone: string; organization?: string }> };
  content: ContactContent;
}

export interface BuiltPoll {
  params: { name: string; options: string[]; selectable_count: number };
  content: PollContent;
}

/** The cards as given; an empty organization is none. */
export function buildContact(params: Record<string, unknown>): BuiltContact {
  const contacts = (params.contacts as Array<Record<string, unknown>>).map((contact) => {
    const organization = contact.organization;
    return {
      name: contact.name as string,
      phone: contact.phone as string,
      ...(typeof organization === 'string' && organization !== '' ? { organization } : {}),
    };
  });
  return { params: { contacts }, content: { type: 'contact', contacts } };
}

/** The poll as given, its selectable count 1 when not given (one answer per voter). */
export function buildPoll(params: Record<string, unknown>): BuiltPoll {
  const name = params.name as string;
  const options = [...(params.options as string[])];
  const selectableCount = typeof params.selectable_count === 'number' ? params.selectable_count : 1;
  return {
    params: { name, options, selectable_count: selectableCount },
    content: { type: 'poll', name, options, selectableCount },
  };
}

/**
 * Virtual phones of the sandbox: the number rules, the magic numbers of
 * docs/internals.md, The network seam and the sandbox and each phone's settings and inbox.
 *
 * Owns: what a phone is and how it behaves by default. Must never: emit
 * events or know about device connections; the world decides who hears what.
 */
import type { PhoneNumber } from '../network.js';
import type { PhonePrivacy, SandboxInboxEntry, SandboxPhone, SandboxPhoneSettings } from './control.js';

/** Digits only, 8-15 of them, no leading zero (spec 4.5 rule 1). */
const PHONE_PATTERN = /^[1-9][0-9]{7,14}$/;

/** Inbox entries kept per phone: enough for tests, bounded so a long run cannot grow without limit. */
export const INBOX_LIMIT = 1000;

export function isWellFormedPhone(phone: unknown): phone is PhoneNumber {
  return typeof phone === 'string' && PHONE_PATTERN.test(phone);
}

/** The behaviour a phone gets from its last four digits, before any explicit settings. */
export function magicOf(phone: PhoneNumber): {
  registered: boolean;
  blocksEveryone: boolean;
  privacy: PhonePrivacy;
  online: boolean;
  rateLimited: boolean;
} {
  const suffix = phone.slice(-4);
  return {
    registered: suffix !== '0000',
    blocksEveryone: suffix === '0001',
    privacy: suffix === '0002' ? 'nobody' : 'everyone',
    online: suffix !== '0003',
    rateLimited: suffix === '0004',
  };
}

export function isMagicPhone(phone: PhoneNumber): boolean {
  return /000[0-4]$/.test(phone);
}

/** The explicit settings a tester gave a phone; these are the durable part of a phone. */
export type PhoneOverrides = Omit<SandboxPhoneSettings, 'phone'>;

/** Whether a status for this message was already reported; shared by all copies of one group message. */
export interface StatusTracker {
  delivered: boolean;
  read: boolean;
}

/** An inbox entry plus what the world needs to send receipts back; stripped before it leaves the world. */
export interface StoredEntry {
  entry: { -readonly [K in keyof SandboxInboxEntry]: SandboxInboxEntry[K] };
  senderSession: string | null;
  tracker: StatusTracker;
}

export class PhoneRecord {
  overrides: PhoneOverrides = {};
  inbox: StoredEntry[] = [];
  /** Messages waiting for an offline phone to come online (bounded like the inbox). */
  pending: StoredEntry[] = [];
  /** Sender phone -> typing duration announced before its next message. */
  typing = new Map<PhoneNumber, number>();

  constructor(readonly phone: PhoneNumber) {}

  get registered(): boolean {
    return this.overrides.registered ?? magicOf(this.phone).registered;
  }
  get online(): boolean {
    return this.overrides.online ?? magicOf(this.phone).online;
  }
  get privacy(): PhonePrivacy {
    return this.overrides.privacy ?? magicOf(this.phone).privacy;
  }
  get autoRead(): boolean {
    return this.overrides.auto_read ?? false;
  }
  get blocksEveryone(): boolean {
    return magicOf(this.phone).blocksEveryone;
  }
  get rateLimited(): boolean {
    return magicOf(this.phone).rateLimited;
  }
  get name(): string | null {
    return this.overrides.name ?? null;
  }

  applySettings(settings: SandboxPhoneSettings): void {
    const next: { -readonly [K in keyof PhoneOverrides]: PhoneOverrides[K] } = { ...this.overrides };
    if (settings.name !== undefined) next.name = settings.name;
    if (settings.registered !== undefined) next.registered = settings.registered;
    if (settings.privacy !== undefined) next.privacy = settings.privacy;
    if (settings.online !== undefined) next.online = settings.online;
    if (settings.auto_read !== undefined) next.auto_read = settings.auto_read;
    this.overrides = next;
  }

  store(stored: StoredEntry): void {
    this.inbox.push(stored);
    if (this.inbox.length > INBOX_LIMIT) this.inbox.splice(0, this.inbox.length - INBOX_LIMIT);
  }

  hold(stored: StoredEntry): void {
    this.pending.push(stored);
    if (this.pending.length > INBOX_LIMIT) this.pending.splice(0, this.pending.length - INBOX_LIMIT);
  }

  /** Takes the typing indicator the sender announced, so only its next message carries it. */
  takeTyping(from: PhoneNumber): number | undefined {
    const ms = this.typing.get(from);
    this.typing.delete(from);
    return ms;
  }

  view(): SandboxPhone {
    return {
      phone: this.phone,
      name: this.name,
      registered: this.registered,
      privacy: this.privacy,
      online: this.online,
      auto_read: this.autoRead,
      blocks_everyone: this.blocksEveryone,
      rate_limited: this.rateLimited,
      inbox: this.inbox.map((s) => structuredClone(s.entry)),
    };
  }
}

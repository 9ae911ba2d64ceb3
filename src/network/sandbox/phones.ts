/**
 * Virtual phones of the sandbox: the number rules, the magic numbers of
 * docs/internals.md, The network seam and the sandbox and each phone's settings and inbox.
 *
 * Owns: what a phone is and how it behaves by default, and its views: every
 * account of the gateway sees and sets its own settings of a phone (keyed by
 * the view the gateway names, its account id), so what one account sets never
 * changes what another's devices meet (docs/security.md). Must never: emit
 * events or know about device connections; the world decides who hears what.
 */
import type { ChatChange, ChatLastMessage, PhoneNumber } from '../network.js';
import type {
  PhonePrivacy,
  SandboxCall,
  SandboxChatSettings,
  SandboxInboxEntry,
  SandboxPhone,
  SandboxPhoneSettings,
  SandboxSeenPresence,
} from '../sandbox-control.js';

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

/**
 * Whose picture of the network: the gateway names one per account (the account id). Callers that
 * name none (the sandbox's own tests, a tester talking to the world directly) share SHARED_VIEW.
 */
export type PhoneView = string;
export const SHARED_VIEW: PhoneView = '';

/** A view name as it comes over the wire or from a caller: anything that is not a string is the shared view. */
export function viewOf(value: unknown): PhoneView {
  return typeof value === 'string' ? value : SHARED_VIEW;
}

/** How a phone behaves in one view: its magic-number defaults, then that view's settings. */
export interface PhoneBehaviour {
  readonly registered: boolean;
  readonly online: boolean;
  readonly privacy: PhonePrivacy;
  readonly autoRead: boolean;
  readonly blocksEveryone: boolean;
  readonly rateLimited: boolean;
  readonly name: string | null;
  readonly about: string | null;
  readonly pictureUrl: string | null;
  readonly isBusiness: boolean;
}

/** Whether a status for this message was already reported; shared by all copies of one group message. */
export interface StatusTracker {
  delivered: boolean;
  read: boolean;
}

/** An inbox entry plus what the world needs to send receipts back; stripped before it leaves the world. */
export interface StoredEntry {
  entry: { -readonly [K in keyof SandboxInboxEntry]: SandboxInboxEntry[K] };
  /** The view of the device that sent it: that view's settings decide how it arrives, and only it shows it. */
  view: PhoneView;
  senderSession: string | null;
  tracker: StatusTracker;
}

/** What a device (by its number) set of its own on the network: its profile, and the numbers it blocked. */
export interface DeviceProfile {
  name: string | null;
  about: string | null;
  pictureUrl: string | null;
  readonly blocked: Set<PhoneNumber>;
}

export class PhoneRecord {
  /** Each view's explicit settings; a view that set nothing has no entry. */
  readonly overrides = new Map<PhoneView, PhoneOverrides>();
  inbox: StoredEntry[] = [];
  /** Messages waiting for the phone to come online in their sender's view (bounded like the inbox). */
  pending: StoredEntry[] = [];
  /** The presence and chat states devices told this phone, oldest first (bounded like the inbox). */
  presence: Array<SandboxSeenPresence & { readonly view: PhoneView }> = [];
  /** The calls this phone made to devices, oldest first (bounded like the inbox). */
  calls: Array<{ -readonly [K in keyof SandboxCall]: SandboxCall[K] } & { readonly view: PhoneView }> = [];
  /** Sender phone -> typing duration announced before its next message. */
  typing = new Map<PhoneNumber, number>();
  /** This number's own chat settings (archive, pin, mute) set by its devices, per view and chat (chats.ts). */
  readonly chats = new Map<string, SandboxChatSettings & { readonly view: PhoneView }>();

  constructor(readonly phone: PhoneNumber) {}

  /** How the phone behaves towards, and is shown to, `view`. */
  in(view: PhoneView): PhoneBehaviour {
    const own = this.overrides.get(view) ?? {};
    const magic = magicOf(this.phone);
    return {
      registered: own.registered ?? magic.registered,
      online: own.online ?? magic.online,
      privacy: own.privacy ?? magic.privacy,
      autoRead: own.auto_read ?? false,
      blocksEveryone: magic.blocksEveryone,
      rateLimited: magic.rateLimited,
      name: own.name ?? null,
      about: own.about ?? null,
      pictureUrl: own.picture_url ?? null,
      isBusiness: own.is_business ?? false,
    };
  }

  applySettings(view: PhoneView, settings: SandboxPhoneSettings): void {
    const next: { -readonly [K in keyof PhoneOverrides]: PhoneOverrides[K] } = { ...this.overrides.get(view) };
    if (settings.name !== undefined) next.name = settings.name;
    if (settings.registered !== undefined) next.registered = settings.registered;
    if (settings.privacy !== undefined) next.privacy = settings.privacy;
    if (settings.online !== undefined) next.online = settings.online;
    if (settings.auto_read !== undefined) next.auto_read = settings.auto_read;
    if (settings.about !== undefined) next.about = settings.about;
    if (settings.picture_url !== undefined) next.picture_url = settings.picture_url;
    if (settings.is_business !== undefined) next.is_business = settings.is_business;
    if (Object.keys(next).length > 0) this.overrides.set(view, next);
  }

  store(stored: StoredEntry): void {
    this.inbox.push(stored);
    if (this.inbox.length > INBOX_LIMIT) this.inbox.splice(0, this.inbox.length - INBOX_LIMIT);
  }

  hold(stored: StoredEntry): void {
    this.pending.push(stored);
    if (this.pending.length > INBOX_LIMIT) this.pending.splice(0, this.pending.length - INBOX_LIMIT);
  }

  seePresence(seen: SandboxSeenPresence, view: PhoneView): void {
    this.presence.push({ ...seen, view });
    if (this.presence.length > INBOX_LIMIT) this.presence.splice(0, this.presence.length - INBOX_LIMIT);
  }

  seeCall(call: SandboxCall, view: PhoneView): void {
    this.calls.push({ ...call, view });
    if (this.calls.length > INBOX_LIMIT) this.calls.splice(0, this.calls.length - INBOX_LIMIT);
  }

  /** The device `to` rejected this phone's call `id`. */
  rejectCall(id: string, to: PhoneNumber): void {
    const call = this.calls.find((c) => c.id === id && c.to === to);
    if (call !== undefined) call.status = 'rejected';
  }

  /**
   * A device of this number (or the phone itself: `last` null) changed a chat's settings; `last` is the last message
   * the device named, if any. Answers the chat's settings now.
   */
  setChat(chat: string, change: ChatChange, last: ChatLastMessage | null, view: PhoneView): SandboxChatSettings {
    const key = `${view}\u0000${chat}`;
    const now = this.chats.get(key) ?? { chat, archived: false, pinned: false, muted_until: null, view };
    const next = {
      ...now,
      ...(change.archived === undefined ? {} : { archived: change.archived }),
      ...(change.pinned === undefined ? {} : { pinned: change.pinned }),
      ...(change.mutedUntil === undefined ? {} : { muted_until: change.mutedUntil?.toISOString() ?? null }),
      last_message_id: last?.id ?? null,
      changed_at: new Date().toISOString(),
    };
    this.chats.set(key, next);
    const { view: _own, ...settings } = next;
    return settings;
  }

  /** Settings saved before a restart (persistence.ts), as they were. */
  restoreChat(settings: SandboxChatSettings, view: PhoneView): void {
    this.chats.set(`${view}\u0000${settings.chat}`, { ...settings, view });
  }

  /** Takes the typing indicator the sender announced, so only its next message carries it. */
  takeTyping(from: PhoneNumber): number | undefined {
    const ms = this.typing.get(from);
    this.typing.delete(from);
    return ms;
  }

  /**
   * The phone as `view` sees it: its settings and the messages its devices sent. Without a view (a
   * tester looking at the world from outside), the shared view's settings and every message.
   */
  view(view?: PhoneView, blockedBy: ReadonlyArray<PhoneNumber> = []): SandboxPhone {
    const seen = this.in(view ?? SHARED_VIEW);
    return {
      phone: this.phone,
      name: seen.name,
      registered: seen.registered,
      privacy: seen.privacy,
      online: seen.online,
      auto_read: seen.autoRead,
      blocks_everyone: seen.blocksEveryone,
      rate_limited: seen.rateLimited,
      about: seen.about,
      picture_url: seen.pictureUrl,
      is_business: seen.isBusiness,
      blocked_by: blockedBy,
      inbox: this.inbox.filter((s) => view === undefined || s.view === view).map((s) => structuredClone(s.entry)),
      presence: this.presence
        .filter((p) => view === undefined || p.view === view)
        .map(({ view: _own, ...seen }) => seen),
      calls: this.calls.filter((c) => view === undefined || c.view === view).map(({ view: _own, ...call }) => call),
      chats: [...this.chats.values()]
        .filter((c) => view === undefined || c.view === view)
        .map(({ view: _own, ...settings }) => settings),
    };
  }
}

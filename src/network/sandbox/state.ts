/**
 * The sandbox world's shared state and plumbing: phones, sessions, links
 * (device connections), groups, timers, event routing and persistence hooks.
 *
 * Owns: who is connected through which session, and getting each event to
 * the right place (the open link, or the session's queue while it is
 * offline). Must never: decide network rules (pairing, messaging and groups
 * live in their own modules) or let a timer outlive close().
 */
import type {
  GroupSettings,
  NetworkEvent,
  NetworkEventHandler,
  NetworkGroupId,
  ParticipantRole,
  PhoneNumber,
} from '../network.js';
import { NetworkUnavailableError } from '../network.js';
import { PhoneRecord, SHARED_VIEW, type DeviceProfile, type PhoneView } from './phones.js';
import type { PersistedState } from './persistence.js';
import { StateFile } from './persistence.js';

export interface SandboxOptions {
  /**
   * How long each QR code of a pairing attempt is shown before the next one replaces it (ms). A list gives
   * each code its own time, the last one repeating (like WhatsApp, whose first code lives longer than the rest).
   */
  readonly qrRotateMs?: number | readonly number[];
  /** Time between the network taking a message and the phone receiving it (ms). */
  readonly deliveryDelayMs?: number;
  /** Time between delivery and the read receipt of an auto-reading phone (ms). */
  readonly readDelayMs?: number;
  /** JSON file keeping sessions, phone settings and groups across restarts. */
  readonly statePath?: string;
}

/** One device connection inside the world. `pairing` → `open` via a scan; `connecting` → `open` after one tick. */
export interface Link {
  readonly id: number;
  readonly deviceId: number;
  /** Whose view of the phones this device's traffic meets (ConnectOptions.view). */
  readonly view: PhoneView;
  readonly sink: NetworkEventHandler;
  state: 'pairing' | 'connecting' | 'open' | 'closed';
  session: string | null;
  phone: PhoneNumber | null;
  expectedPhone: PhoneNumber | null;
  qr: string | null;
  /** How many QR codes this link has shown (picks the next code's time from `qrRotateMs`). */
  qrShown: number;
  /** The pairing code asked for during this pairing attempt, and the number it is bound to. */
  pairingCode: { readonly code: string; readonly phone: PhoneNumber } | null;
  /** The only timer a link may hold: QR rotation while pairing, or the deferred `connected`. */
  timer: NodeJS.Timeout | null;
  /** Receipts sent over this link lately (see RESEND_WINDOW_MS), oldest first. */
  recent: Array<{ readonly at: number; readonly event: NetworkEvent }>;
}

export interface SessionRecord {
  readonly token: string;
  readonly phone: PhoneNumber;
  /** The link currently using this session (not closed), if any. */
  link: Link | null;
  /** Events that happened while no link was open; emitted after the next `connected`. */
  queue: NetworkEvent[];
}

export interface GroupRecord {
  readonly id: NetworkGroupId;
  subject: string;
  description: string | null;
  readonly participants: Map<PhoneNumber, ParticipantRole>;
  settings: GroupSettings;
  /** The invite code, made when an admin first asks for it; revoking makes a new one. */
  invite?: string;
  /** Names the group's picture (a digest of its bytes, or the address a phone set); absent: none. */
  picture?: string;
}

/** A new group: everyone may post, only admins edit it (the sandbox's default), messages stay. */
export const DEFAULT_GROUP_SETTINGS: GroupSettings = {
  onlyAdminsCanSend: false,
  onlyAdminsCanEdit: true,
  disappearingSeconds: 0,
};

/** A message a tester seeded into a number's history with one phone. */
export interface SeededHistoryMessage {
  readonly id: string;
  /** The other phone of the conversation. */
  readonly phone: PhoneNumber;
  /** True: the number wrote it to the phone; false: the phone wrote it to the number. */
  readonly fromMe: boolean;
  readonly text: string;
  readonly at: number;
}

/** Bounds that keep a long-running sandbox's memory flat. */
const SESSION_QUEUE_LIMIT = 1000;
const SENT_IDS_LIMIT = 100_000;
/**
 * Receipts sent over a connection in its last seconds may never have been
 * processed (the gateway died holding them), and the network has no
 * acknowledgement of its own: like a real network redelivering unacknowledged
 * receipts, they are sent again after the session's next `connected`.
 * Receipts only move a message forward, so a second copy changes nothing.
 */
const RESEND_WINDOW_MS = 5_000;

export class WorldState {
  readonly qrRotateMs: readonly number[];
  readonly deliveryDelayMs: number;
  readonly readDelayMs: number;
  readonly phones = new Map<PhoneNumber, PhoneRecord>();
  readonly sessions = new Map<string, SessionRecord>();
  readonly links = new Set<Link>();
  /** Current QR text -> its pairing link; rotated-out codes are removed so they stop working. */
  readonly qrs = new Map<string, Link>();
  /** Current pairing code -> its pairing link; like a QR, it stops working when the attempt ends. */
  readonly pairingCodes = new Map<string, Link>();
  readonly groups = new Map<NetworkGroupId, GroupRecord>();
  /** Device number -> its own profile and blocked numbers (saved to the state file). */
  readonly profiles = new Map<PhoneNumber, DeviceProfile>();
  /** "sender phone + message id" already taken by the network: the idempotency of sendMessage. */
  readonly sentIds = new Set<string>();
  /** "sender phone + message id" already refused once by a rate-limited recipient. */
  readonly rateLimitedOnce = new Set<string>();
  /** Histories testers seeded (history.ts), by view and device number: offered when that number pairs. */
  readonly histories = new Map<string, SeededHistoryMessage[]>();
  /** Device phone -> how many of its connections were closed because the same session was opened again. */
  readonly replaced = new Map<PhoneNumber, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly file: StateFile | null;
  private nextLinkId = 1;
  closed = false;

  constructor(options: SandboxOptions) {
    const rotate = options.qrRotateMs ?? 20_000;
    this.qrRotateMs = typeof rotate === 'number' ? [rotate] : rotate.length > 0 ? [...rotate] : [20_000];
    this.deliveryDelayMs = options.deliveryDelayMs ?? 30;
    this.readDelayMs = options.readDelayMs ?? 30;
    this.file = options.statePath ? new StateFile(options.statePath, () => this.snapshot()) : null;
    const saved = this.file?.load();
    if (saved) this.restore(saved);
  }

  /** The phone record, created on first use: every well-formed number exists on the network. */
  phone(phone: PhoneNumber): PhoneRecord {
    let record = this.phones.get(phone);
    if (!record) {
      record = new PhoneRecord(phone);
      this.phones.set(phone, record);
    }
    return record;
  }

  /** Runs `fn` later; every timer is unref'd and dies with close(). Returns null once closed. */
  later(ms: number, fn: () => void): NodeJS.Timeout | null {
    if (this.closed) return null;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.add(timer);
    return timer;
  }

  cancel(timer: NodeJS.Timeout | null): void {
    if (!timer) return;
    clearTimeout(timer);
    this.timers.delete(timer);
  }

  createLink(deviceId: number, view: PhoneView, sink: NetworkEventHandler): Link {
    const link: Link = {
      id: this.nextLinkId++,
      deviceId,
      view,
      sink,
      state: this.closed ? 'closed' : 'connecting',
      session: null,
      phone: null,
      expectedPhone: null,
      qr: null,
      qrShown: 0,
      pairingCode: null,
      timer: null,
      recent: [],
    };
    if (!this.closed) this.links.add(link);
    return link;
  }

  /** The phone of an open link; anything else cannot act on the network. */
  requireOpen(link: Link): PhoneNumber {
    if (link.state !== 'open' || link.phone === null) throw new NetworkUnavailableError();
    return link.phone;
  }

  emit(link: Link, event: NetworkEvent): void {
    if (link.state === 'closed') return;
    try {
      link.sink(event);
    } catch (err) {
      // A failing gateway handler must not break the world for every other device.
      console.error('sandbox: event handler failed for device %d: %s', link.deviceId, (err as Error).message);
    }
  }

  /** Sends to the session's open link, or queues it for the next `connected` like a real network. */
  emitToSession(token: string | null, event: NetworkEvent): void {
    const session = token === null ? undefined : this.sessions.get(token);
    if (!session) return;
    if (session.link?.state === 'open') {
      this.emit(session.link, event);
      if (event.type === 'message_status') {
        const now = Date.now();
        const { recent } = session.link;
        recent.push({ at: now, event });
        while (recent[0]!.at < now - RESEND_WINDOW_MS) recent.shift();
      }
      return;
    }
    session.queue.push(event);
    if (session.queue.length > SESSION_QUEUE_LIMIT) session.queue.shift();
  }

  flushQueue(session: SessionRecord): void {
    const queued = session.queue;
    session.queue = [];
    for (const event of queued) this.emitToSession(session.token, event);
  }

  /** Closes a link, after telling it why when `event` is given (`disconnected`/`logged_out` are always final). */
  endLink(link: Link, event?: NetworkEvent): void {
    if (link.state === 'closed') return;
    if (event) this.emit(link, event);
    link.state = 'closed';
    this.cancel(link.timer);
    link.timer = null;
    if (link.qr !== null) this.qrs.delete(link.qr);
    link.qr = null;
    if (link.pairingCode !== null) this.pairingCodes.delete(link.pairingCode.code);
    link.pairingCode = null;
    const session = link.session === null ? undefined : this.sessions.get(link.session);
    if (session?.link === link) {
      session.link = null;
      const since = Date.now() - RESEND_WINDOW_MS;
      const resend = link.recent.filter((r) => r.at >= since).map((r) => r.event);
      session.queue = [...resend, ...session.queue].slice(-SESSION_QUEUE_LIMIT);
    }
    link.recent = [];
    this.links.delete(link);
  }

  /** Invalidates a session; its link, if any, hears `logged_out`. */
  endSession(token: string, reason: string): void {
    const session = this.sessions.get(token);
    if (!session) return;
    this.sessions.delete(token);
    if (session.link) this.endLink(session.link, { type: 'logged_out', reason });
    this.changed();
  }

  rememberSent(key: string): void {
    this.sentIds.add(key);
    if (this.sentIds.size > SENT_IDS_LIMIT) {
      const oldest = this.sentIds.values().next();
      if (!oldest.done) this.sentIds.delete(oldest.value);
    }
    // Once taken, the id will never be refused again, so its rate-limit mark is no longer needed.
    this.rateLimitedOnce.delete(key);
  }

  /** Durable state changed: save it soon. */
  changed(): void {
    this.file?.schedule();
  }

  close(): void {
    if (this.closed) return;
    for (const link of [...this.links]) this.endLink(link);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.closed = true;
    this.file?.flush();
  }

  private snapshot(): PersistedState {
    return {
      version: 1,
      sessions: [...this.sessions.values()].map((s) => ({ token: s.token, phone: s.phone })),
      phones: [...this.phones.values()].flatMap((p) =>
        [...p.overrides].map(([view, overrides]) => ({
          phone: p.phone,
          ...overrides,
          ...(view === SHARED_VIEW ? {} : { view }),
        })),
      ),
      groups: [...this.groups.values()].map((g) => ({
        id: g.id,
        subject: g.subject,
        description: g.description,
        participants: [...g.participants].map(([phone, role]) => ({ phone, role })),
        settings: g.settings,
        ...(g.invite === undefined ? {} : { invite: g.invite }),
        ...(g.picture === undefined ? {} : { picture: g.picture }),
      })),
      profiles: [...this.profiles].map(([phone, p]) => ({
        phone,
        name: p.name,
        about: p.about,
        picture_url: p.pictureUrl,
        blocked: [...p.blocked],
      })),
      chats: [...this.phones.values()].flatMap((p) =>
        [...p.chats.values()].map(({ view, ...settings }) => ({
          phone: p.phone,
          ...settings,
          ...(view === SHARED_VIEW ? {} : { view }),
        })),
      ),
    };
  }

  private restore(saved: PersistedState): void {
    for (const s of saved.sessions)
      this.sessions.set(s.token, { token: s.token, phone: s.phone, link: null, queue: [] });
    // Entries saved before phones had views (no `view`) are the shared view's.
    for (const p of saved.phones) this.phone(p.phone).applySettings(p.view ?? SHARED_VIEW, p);
    for (const g of saved.groups) {
      const participants = new Map(g.participants.map((p) => [p.phone, p.role] as const));
      // Files saved before groups had settings: the defaults.
      const settings = { ...DEFAULT_GROUP_SETTINGS, ...g.settings };
      const group = { id: g.id, subject: g.subject, description: g.description, participants, settings };
      this.groups.set(g.id, {
        ...group,
        ...(g.invite === undefined ? {} : { invite: g.invite }),
        ...(g.picture === undefined ? {} : { picture: g.picture }),
      });
    }
    for (const p of saved.profiles ?? []) {
      const { name, about, picture_url: pictureUrl } = p;
      this.profiles.set(p.phone, { name, about, pictureUrl, blocked: new Set(p.blocked) });
    }
    for (const { phone, view, ...settings } of saved.chats ?? [])
      this.phone(phone).restoreChat(settings, view ?? SHARED_VIEW);
  }
}

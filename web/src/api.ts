/**
 * The dashboard's only way to the gateway: the public API, on the same
 * origin, with the signed-in token as a bearer token (docs/internals.md, The dashboard).
 *
 * Owns: the token's place (session storage, never a URL), turning error
 * envelopes into `ApiFailure`, telling the app when the token stops working,
 * and how far the gateway's clock is from this browser's.
 */

const TOKEN_KEY = 'gateway.token';

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** An answer in the error envelope: `{code, message, error?, errors?}`. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly detail?: string,
    readonly errors?: Record<string, string[]>,
  ) {
    super(message);
  }

  /** The message and its detail, as one line for a person. */
  describe(): string {
    return this.detail === undefined ? this.message : `${this.message}: ${this.detail}`;
  }

  /** The messages the API gave for one field path (e.g. `receiver`, `params.text`), if any. */
  forField(path: string): string[] {
    if (this.errors === undefined) return [];
    return Object.entries(this.errors)
      .filter(([key]) => key === path || key.startsWith(`${path}.`))
      .flatMap(([, messages]) => messages);
  }
}

let onUnauthorized: () => void = () => undefined;

/** The stored token stopped working (a 401 to a request made with it): the app signs out. */
export function tokenRefused(token: string | null): void {
  if (token !== null && token === storedToken()) onUnauthorized();
}

/** The gateway's clock minus this browser's (ms), from the last answer's `Date` header. */
let clockOffsetMs = 0;

/**
 * Times in answers (an `expires_at`) are the gateway's; a browser's clock can be minutes off.
 * `Date` has whole seconds: the gateway's time is taken as the end of that second, so a time
 * converted with this offset is never later than the gateway's (at most 1 s earlier).
 */
export function gatewayClockOffset(): number {
  return clockOffsetMs;
}

/** Called when a request with the stored token answers 401 (revoked elsewhere, or the store was reset). */
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

export interface Envelope<T> {
  code?: number;
  status?: number;
  message: string;
  data: T;
  meta?: { page: number; per_page: number; total: number };
  next_cursor?: string | null;
}

export async function call<T>(
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  token: string | null = storedToken(),
): Promise<Envelope<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiFailure(0, 'The gateway cannot be reached', 'check that it is running');
  }
  const date = Date.parse(response.headers.get('date') ?? '');
  if (!Number.isNaN(date)) clockOffsetMs = date + 1000 - Date.now();
  let parsed: unknown = null;
  try {
    parsed = await response.json();
  } catch {
    // not JSON: handled below
  }
  if (!response.ok) {
    const envelope = (parsed ?? {}) as { message?: string; error?: string; errors?: Record<string, string[]> };
    if (response.status === 401) tokenRefused(token);
    throw new ApiFailure(
      response.status,
      envelope.message ?? `HTTP ${response.status}`,
      envelope.error,
      envelope.errors,
    );
  }
  return parsed as Envelope<T>;
}

// --- shapes of the answers the dashboard reads (the API's own field names) ---

export interface Device {
  id: number;
  name: string;
  phone: string | null;
  webhook_url: string | null;
  webhook_secret: string;
  webhook_format?: string;
  webhook_reply?: boolean;
  status: 'ACTIVE' | 'SUSPENDED';
  paired_status: 'UNPAIRED' | 'PAIRED' | 'EXPIRED';
  connected: boolean;
  /** The network the device is on: a paired device keeps the one it paired on (docs/networks-per-device.md). */
  network?: 'sandbox' | 'whatsapp';
  server: { name: string; status: string };
  package: { code: string; name: string };
  subscription: { quote_available: string; quote_used: string };
  created_at: string;
}

export interface GatewayInfo {
  /** The network this account's devices connect to (a sandbox account's: the sandbox, beside WhatsApp too). */
  network: 'sandbox' | 'whatsapp';
  sandbox_control: boolean;
  account: { name: string; sandbox: boolean };
  server: { name: string };
  version: string;
}

export interface Message {
  id: string;
  status: 'pending' | 'sent' | 'delivered' | 'failed';
  type: string;
  direction: 'outgoing' | 'incoming';
  device: string;
  receiver: string;
  sender: string | null;
  message: string | null;
  file_url: string | null;
  timestamp: string;
  sent_at: string | null;
  delivered_at: string | null;
  read_at: string | null;
  failed_at: string | null;
  failed_reason: string | null;
  /** Incoming media only: its download; `file_url` serves the bytes once `stored`. */
  media?: MessageMedia;
  /** The reactions phones show on it, one per phone; absent when none. */
  reactions?: Array<{ from: string; emoji: string }>;
  /** Polls only: the poll and its votes so far. */
  poll?: Poll;
  edited_at?: string;
  deleted_at?: string;
}

export interface MessageMedia {
  status: 'pending' | 'stored' | 'too_large' | 'failed' | 'expired';
  mimetype: string;
  size: number | null;
  file_name: string | null;
  sha256: string | null;
}

export interface Poll {
  name: string;
  options: string[];
  selectable_count: number;
  tally: Array<{ option: string; count: number; voters: string[] }>;
}

export interface Attempt {
  attempted_at: string;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  /** Reply by response: what the receiver's answer asked to send, and what came of it. */
  reply?: {
    ignored: string | null;
    replies: Array<{ type: string; status: 'queued' | 'already_queued' | 'refused'; error?: { message: string } }>;
  } | null;
}

export interface Delivery {
  id: string;
  type: string;
  status: 'pending' | 'delivered' | 'failed' | 'skipped';
  url: string;
  created_at: string;
  attempts: Attempt[];
}

export interface Group {
  id: number;
  subject: string;
  participant_count: number;
  device_admin: null | 'admin' | 'superadmin';
}

export interface GroupDetail extends Group {
  participants: Array<{ phone: string; name?: string; admin: null | 'admin' | 'superadmin' }>;
}

export interface CreatedGroup extends Group {
  participants: GroupDetail['participants'];
  failed_participants: Array<{ phone: string; status: string; error: string; error_code: string }>;
}

export interface MembersResult {
  added_members: Array<{ phone: string; status: string }>;
  failed_members: Array<{ phone: string; status: string; error: string; error_code: string }>;
  total_added: number;
  total_failed: number;
  new_participant_count: number;
}

/** The answer of a remove, promote or demote: one outcome per participant. */
export interface ParticipantsChange {
  succeeded: string[];
  failed: Array<{ phone: string; error_code: 'NOT_A_MEMBER' | 'INVALID_NUMBER' | 'FORBIDDEN' }>;
}

/** One chat of a device (`GET /chats`): a phone's, or a group's. */
export interface Chat {
  /** The contact's phone for a user chat, the group's id for a group. */
  id: string;
  type: 'user' | 'group';
  name: string | null;
  last_message: Message | null;
  unread_count: number;
  archived: boolean;
  pinned: boolean;
  muted_until: string | null;
}

/** A contact as the network shows it to a device (`GET /contacts/{phone}`). */
export interface Contact {
  phone: string;
  name: string | null;
  about: string | null;
  profile_picture_url: string | null;
  registered: boolean;
  blocked: boolean;
}

/** One of the account's webhooks (`GET /webhooks`); `secret` only in the answers that create or rotate it. */
export interface AccountWebhook {
  id: string;
  url: string;
  /** null: every device of the account, present and future. */
  devices: number[] | null;
  /** null: every event type. */
  events: string[] | null;
  format: string;
  headers: Record<string, string>;
  enabled: boolean;
  created_at: string;
  secret?: string;
}

/** One event as the log and the stream carry it: the standard body plus its cursor. */
export interface LoggedEvent {
  cursor: string;
  id: string;
  type: string;
  device: { id: number; phone: string | null } | null;
  created_at: string;
  data: unknown;
}

export interface Token {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

export interface InboxEntry {
  message_id: string;
  from: string;
  type: string;
  content: Record<string, unknown>;
  received_at: string;
  read_at: string | null;
}

export const PACKAGES = [
  { code: 'BETA', name: 'Beta Tester' },
  { code: 'STARTER60K', name: 'Starter' },
  { code: 'STARTUP240K', name: 'Startup' },
  { code: 'BUSINESS', name: 'Business' },
] as const;

/**
 * Row types of every table, as the query builder sees them.
 *
 * Owns: the shape of stored data. Conventions, identical on both dialects:
 * times are epoch milliseconds (BIGINT), booleans are 0/1 integers, JSON is
 * text, ids are integers from the database except where a table says
 * otherwise.
 */
import type { ColumnType, Generated, Kysely, Transaction } from 'kysely';
import type { EventsTable, WebhookEventsTable, WebhooksTable, WebhookAttemptsTable } from './schema-events.js';

export type { EventsTable, WebhookEventsTable, WebhooksTable, WebhookAttemptsTable } from './schema-events.js';

/** A nullable column a migration added later: inserts may leave it out (it is then null). */
export type AddedLater<T> = ColumnType<T | null, T | null | undefined, T | null>;

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  max_devices: number;
  /** 1: a sandbox account, whose devices live on the sandbox whatever network the gateway runs (docs/internals.md, WhatsApp and sandbox accounts). */
  sandbox: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface ApiTokensTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** The first characters of the secret, shown so a user can tell tokens apart. */
  prefix: string;
  /** SHA-256 of the whole secret, hex. The secret itself is never stored. */
  token_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** One row (id 1): `revision` counts token revocations, so every process can tell its cache is stale (009b). */
export interface TokenRevocationsTable {
  id: number;
  revision: number;
}

export interface DevicesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  phone: string | null;
  /** The phone the device was created for; pairing from another number is refused. */
  expected_phone: string | null;
  package_code: string;
  /** ACTIVE or SUSPENDED (administrative). */
  status: string;
  /** UNPAIRED, PAIRED or EXPIRED (connection to the network). */
  paired_status: string;
  connected: number;
  webhook_url: string | null;
  webhook_secret: string;
  /** The secret the last rotation replaced; it also signs deliveries until `webhook_secret_previous_until`. Secret. */
  webhook_secret_previous: string | null;
  webhook_secret_previous_until: number | null;
  /** How deliveries are rendered: `standard`, `whatspie_v1` or `whatspie_v2` (008d). */
  webhook_format: Generated<string>;
  /** 1: a `standard` device's receiver may answer `message.incoming` with replies (008d). */
  webhook_reply: Generated<number>;
  quota_limit: number;
  quote_used: number;
  /** The network a paired device paired on, `sandbox` or `whatsapp`; null while unpaired (009a, docs/networks-per-device.md). */
  network: AddedLater<string>;
  send_interval_ms: number | null;
  /** 1: incoming calls are rejected on the network (012a). */
  reject_calls: Generated<number>;
  /** Sent to a caller whose call was rejected; null for none (012a). */
  reject_calls_message: AddedLater<string | null>;
  /** When the history sync of the current pairing was announced; null until then (013b; src/messages/history.ts). */
  history_synced_at: AddedLater<number>;
  /** The gateway node holding the connection. */
  server_name: string | null;
  /** Network session credentials. Secret: never returned, never logged. */
  network_session: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

/** The network's id of each incoming message, per device: a message the network repeats is stored once. */
export interface IncomingMessageIdsTable {
  device_id: number;
  network_id: string;
  message_id: string;
  created_at: number;
}

export interface MessagesTable {
  /** Commit order: the per-device sending order. */
  seq: Generated<number>;
  /** Public id: a ULID, time-sortable; also the network message id. */
  id: string;
  account_id: number;
  device_id: number;
  /** outgoing or incoming. */
  direction: string;
  type: string;
  /** The device's number when the message was accepted (or received). */
  device_phone: string;
  /** A phone number, or a network group id for group sends. */
  receiver: string;
  /** Incoming only: who sent it. */
  sender: string | null;
  message: string | null;
  file_url: string | null;
  /** JSON. */
  params: string;
  simulate_typing: number;
  /** pending, sent, delivered, read is a timestamp not a status, failed. */
  status: string;
  failed_reason: string | null;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
  sent_at: number | null;
  delivered_at: number | null;
  read_at: number | null;
  failed_at: number | null;
  /** Outgoing: `text` when the network delivered it as text rather than in its own form (docs/internals.md, WhatsApp and sandbox accounts); set when sent. */
  rendered_as: string | null;
  /** Outgoing replies: JSON of the network seam's QuotedMessage, resolved at acceptance (008c). */
  quoted: AddedLater<string>;
  /** When its author edited it on the network; the text is the edited one (010a; events/message-changes.ts). */
  edited_at: AddedLater<number>;
  /** When its author deleted it for everyone on the network; its content is kept (010a). */
  deleted_at: AddedLater<number>;
  /** Set while the dispatcher sends it (011a): a cancel ends only a `pending` message not claimed. */
  claimed_at: AddedLater<number>;
  /** The chat it is in (013a; src/chats/chat-key.ts): a group's network id or the other person's number; null for action rows. */
  chat: AddedLater<string>;
  /** `history`: offered by the network's history sync at pairing (013b; src/messages/history.ts); null: live. */
  source: AddedLater<string>;
}

/** One chat of a device (013a; src/chats/maintain.ts keeps it with every message write). */
export interface ChatsTable {
  device_id: number;
  /** The other person's number, or the group's network id (`…@g.us`). */
  chat: string;
  account_id: number;
  /** `user` or `group`. */
  type: string;
  /** A name the network gave the chat (history sync), if any; a group's subject is read from `groups`. */
  name: string | null;
  /** The message with the greatest `(created_at, id)` of the chat; null while it has none. */
  last_message_id: string | null;
  /** That message's `created_at`; 0 while the chat has no message. */
  last_message_at: number;
  /** Received messages of the chat with no `read_at`. */
  unread_count: number;
  archived: number;
  pinned: number;
  /** Milliseconds; null: not muted. */
  muted_until: number | null;
  updated_at: number;
}

/** A phone's reaction to a message (010a; src/messages/reactions.ts). */
export interface MessageReactionsTable {
  message_id: string;
  /** The reacting phone's number (or, on WhatsApp, its LID form while no number is known). */
  phone: string;
  emoji: string;
  reacted_at: number;
}

/** A voter's current vote on a poll (011c; src/messages/poll-votes.ts). */
export interface PollVotesTable {
  message_id: string;
  /** The voter's number (or, on WhatsApp, its LID form while no number is known). */
  voter: string;
  /** JSON array of the chosen option texts, in the poll's order; empty when the vote was withdrawn. */
  selected: string;
  voted_at: number;
}

/** A group member's receipt of an outgoing group message (009e; src/messages/receipts.ts). */
export interface MessageReceiptsTable {
  message_id: string;
  /** The member's number, or the network's own id for it when the number is not known. */
  phone: string;
  delivered_at: number | null;
  read_at: number | null;
}

export interface MessageMediaTable {
  message_id: string;
  mimetype: string;
  /** Unused since 009c (which moved rows from before media_chunks into chunks); always empty. */
  bytes: Uint8Array;
  /** The media_chunks holding the bytes (what gets sent). Deleted with this row once the message leaves. */
  media_id: string | null;
}

export interface MediaChunksTable {
  media_id: string;
  seq: number;
  bytes: Uint8Array;
  /** The length of `bytes` (009c), read from an index instead of the bytes. */
  size: number;
  created_at: number;
}

/** The media of an incoming message (011b; src/media/incoming-repository.ts). */
export interface IncomingMediaTable {
  media_id: string;
  message_id: string;
  account_id: number;
  device_id: number;
  status: 'pending' | 'stored' | 'too_large' | 'failed' | 'expired';
  mimetype: string;
  size: number | null;
  file_name: string | null;
  /** Hex SHA-256 of the bytes. */
  sha256: string | null;
  attempts: number;
  next_attempt_at: number;
  /** The network's reference to the media (opaque here); null once the download ended. */
  network_ref: string | null;
  created_at: number;
  stored_at: number | null;
}

/** Secrets the gateway makes itself, shared by every node (011b). */
export interface GatewaySecretsTable {
  name: string;
  secret: string;
  created_at: number;
}

export interface IdempotencyKeysTable {
  account_id: number;
  key: string;
  request_hash: string;
  /** JSON of the first answer. */
  response: string;
  created_at: number;
}

export interface Database {
  messages: MessagesTable;
  chats: ChatsTable;
  message_media: MessageMediaTable;
  message_receipts: MessageReceiptsTable;
  message_reactions: MessageReactionsTable;
  poll_votes: PollVotesTable;
  media_chunks: MediaChunksTable;
  incoming_media: IncomingMediaTable;
  gateway_secrets: GatewaySecretsTable;
  idempotency_keys: IdempotencyKeysTable;
  accounts: AccountsTable;
  api_tokens: ApiTokensTable;
  token_revocations: TokenRevocationsTable;
  devices: DevicesTable;
  events: EventsTable;
  webhook_events: WebhookEventsTable;
  webhooks: WebhooksTable;
  webhook_attempts: WebhookAttemptsTable;
  incoming_message_ids: IncomingMessageIdsTable;
  groups: GroupsTable;
  group_add_requests: GroupAddRequestsTable;
  group_daily_additions: GroupDailyAdditionsTable;
  store_probe: StoreProbeTable;
  network_auth: NetworkAuthTable;
  network_auth_keys: NetworkAuthKeysTable;
  network_sent: NetworkSentTable;
  network_offers: NetworkOffersTable;
  cluster_nodes: ClusterNodesTable;
  device_leases: DeviceLeasesTable;
  lid_senders: LidSendersTable;
  contact_profiles: ContactProfilesTable;
}

/** Readiness's throwaway writes (see store/store.ts); empty between probes. */
export interface StoreProbeTable {
  id: Generated<number>;
  checked_at: number;
  filler: Uint8Array;
}

/** One (device, network group) pair: its gateway id and the network's last snapshot of the group. */
export interface GroupsTable {
  /** The `{group_id}` of every group route. */
  id: Generated<number>;
  account_id: number;
  device_id: number;
  /** The network's id of the group (e.g. `120363...@g.us`). */
  network_id: string;
  subject: string;
  description: string | null;
  /** JSON array of `{phone, name?, role}`, as the network last reported it. */
  participants: string;
  participant_count: number;
  /** Maximum members the network allows. */
  capacity: number;
  /** The device's own role in the group: null, admin or superadmin. */
  device_admin: string | null;
  created_at: number;
  synced_at: number;
  /** Set when the device is no longer in the group; the row (and its id) comes back if it rejoins. */
  left_at: number | null;
  /** Settings as the network last reported them (008c): 0/1, and seconds (0: off); null until reported. */
  only_admins_can_send: AddedLater<number>;
  only_admins_can_edit: AddedLater<number>;
  disappearing_seconds: AddedLater<number>;
  /** Names the group's picture as the network last reported it (013c); null: none or not reported. */
  picture_id: AddedLater<string>;
}

/** One row per admitted members-add request: the sliding one-minute window. */
export interface GroupAddRequestsTable {
  id: Generated<number>;
  group_id: number;
  created_at: number;
}

/** Members added (or reserved for a request in flight) per group and UTC day. */
export interface GroupDailyAdditionsTable {
  group_id: number;
  /** Days since the epoch, UTC. */
  day: number;
  used: number;
}

/** One network session's credentials (sealed) and its single-writer fence. */
export interface NetworkAuthTable {
  session_id: string;
  creds: Uint8Array | null;
  /** Grows with every claim of the session; a write presenting an older value is refused. */
  fence: number;
  created_at: number;
  updated_at: number;
}

/** One key of a network session, sealed. */
export interface NetworkAuthKeysTable {
  session_id: string;
  kind: string;
  key_id: string;
  value: Uint8Array;
}

/** A message a network session sent (sealed), kept to answer the network's resend requests. */
export interface NetworkSentTable {
  session_id: string;
  message_id: string;
  payload: Uint8Array;
  acked_at: number | null;
  created_at: number;
}

/** The choices a session last offered in one chat as numbered text (sealed), for reading a reply back as a choice. */
export interface NetworkOffersTable {
  session_id: string;
  /** The chat: a phone number, or a group's network id. */
  chat: string;
  payload: Uint8Array;
  created_at: number;
}

/** A gateway process sharing the store (docs/internals.md, Clusters). */
export interface ClusterNodesTable {
  name: string;
  /** The process running under this name now (random per start). */
  instance: string;
  /** Where other nodes forward requests that need this node's live connections. */
  url: string;
  started_at: number;
  /** Renewed every few seconds; renewing it renews every lease of the node. */
  heartbeat_at: number;
  /** Set by a clean shutdown: its leases were released and it is DOWN at once. */
  stopped_at: number | null;
}

/** Which node holds a device's connection; `node` null: released. */
export interface DeviceLeasesTable {
  device_id: number;
  node: string | null;
  /** Grows at every takeover; writes made under an older epoch are refused. */
  epoch: number;
  acquired_at: number;
}

/** A handle repositories take: the database, or a transaction on it. */
export type Db = Kysely<Database> | Transaction<Database>;

/** LIDs whose messages a device delivered under the LID, and the number reported for each once known (009f). */
export interface LidSendersTable {
  device_id: number;
  /** `12345@lid`. */
  lid: string;
  /** Null until the network made the number known and the gateway reported it. */
  phone: string | null;
  first_seen_at: number;
  resolved_at: number | null;
}

/** The last profile the network showed a device of a number (013c; src/contacts/book.ts). */
export interface ContactProfilesTable {
  device_id: number;
  phone: string;
  name: string | null;
  about: string | null;
  picture_url: string | null;
  /** 0/1. */
  registered: number;
  /** 0/1: the device blocked the number. */
  blocked: number;
  fetched_at: number;
}

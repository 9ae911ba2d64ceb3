/**
 * Every setting of the gateway, read from the environment once at start-up,
 * validated, and typed (docs/internals.md, Running and operating).
 *
 * Owns: names, defaults and validation of settings. A bad value stops start-up
 * with a message naming the variable; nothing else in the code reads
 * `process.env`.
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { AllowListError, parseAllowedPrivateHosts } from './outbound/allow-list.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** `postgres://...` switches the store to PostgreSQL; otherwise SQLite under dataDir. */
  readonly databaseUrl: string | null;
  /** `sandbox` (in-process), `sandbox+ws://host:port` (a sandbox process), or `whatsapp`. */
  readonly network: string;
  readonly bootstrapToken: string | null;
  readonly allowPrivateUrls: boolean;
  /** Private destinations allowed for webhooks and media (host names and CIDRs), normalised. */
  readonly allowedPrivateHosts: readonly string[];
  readonly sendIntervalMs: number;
  readonly pairingWindowS: number;
  readonly serverName: string;
  /**
   * Where other nodes of a cluster reach this one's API (`GATEWAY_ADVERTISE_URL`); null: http://HOST:PORT
   * as it listens (127.0.0.1 when HOST is a wildcard). Only used with PostgreSQL (docs/internals.md, Clusters).
   */
  readonly advertiseUrl: string | null;
  readonly logLevel: LogLevel;
  /** Days an ended webhook delivery (with its attempts) is kept; 0 keeps them (docs/internals.md, Retention). */
  readonly webhookRetentionDays: number;
  /**
   * Deliveries of one device to one destination in flight at once (`GATEWAY_WEBHOOK_IN_FLIGHT`, 1–64, default 4):
   * what a slow receiver can hold, and with a fast one what a busy device's events go out at (docs/webhooks.md).
   */
  readonly webhookInFlight: number;
  /** Days a message is kept; 0 (the default) keeps them for ever (docs/internals.md, Retention). */
  readonly messageRetentionDays: number;
  /**
   * Days of a phone's history stored when a device is paired (`GATEWAY_HISTORY_DAYS`, default 7; 0 stores none and
   * asks the network for none: docs/api.md, History sync).
   */
  readonly historyDays: number;
  /** Days an event stays in the event log (`GATEWAY_EVENT_RETENTION_DAYS`, default 7; 0 keeps them; docs/events.md). */
  readonly eventRetentionDays: number;
  /** Limits of the HTTP server: how long a client may take, how many connections it may hold. */
  readonly http: HttpLimits;
  /**
   * Seals stored network credentials (docs/internals.md, WhatsApp and sandbox accounts): 32 bytes from `GATEWAY_NETWORK_KEY`. Required with
   * `GATEWAY_NETWORK=whatsapp`, null otherwise (the sandbox stores nothing secret of the network's).
   */
  readonly networkKey: NetworkKeys | null;
  /**
   * WhatsApp Web's socket (`GATEWAY_WHATSAPP_URL`); null: the library's default. For a local stand-in in tests and
   * benchmarks (docs/standin.md), so only a loopback host is accepted.
   */
  readonly whatsappUrl: string | null;
  /**
   * `GATEWAY_WHATSAPP_VERSION` (e.g. `2.3000.1234567`): the WhatsApp Web version the connector announces;
   * undefined: the library's own default. For when WhatsApp refuses the default as too old (405, docs/whatsapp.md).
   */
  readonly whatsappVersion?: readonly [number, number, number];
  /**
   * `GATEWAY_WHATSAPP_ROOT_KEY`: the stand-in's Noise certificate root (32 bytes, base64), trusted instead of
   * WhatsApp's; null: WhatsApp's own. Only together with a loopback `GATEWAY_WHATSAPP_URL`.
   */
  readonly whatsappRootKey: Buffer | null;
  /**
   * `GATEWAY_WHATSAPP_NATIVE_INTERACTIVE`: send `list` and `template` in WhatsApp's native interactive
   * form instead of as text (docs/internals.md, WhatsApp and sandbox accounts; experimental). Only with `GATEWAY_NETWORK=whatsapp`.
   */
  readonly whatsappNativeInteractive: boolean;
  /**
   * `GATEWAY_WHATSAPP_ACK_TIMEOUT_MS`: how long a send waits for the server's acknowledgement once its stanza has
   * left (media uploaded first) before it counts as a transient failure (docs/whatsapp.md, Acknowledgements).
   */
  readonly whatsappAckTimeoutMs: number;
  /**
   * `GATEWAY_WHATSAPP_UPLOAD_TIMEOUT_MS`: how long a media upload may stall (no bytes moving either way) before the
   * send counts as a transient failure (docs/whatsapp.md, Sending media).
   */
  readonly whatsappUploadTimeoutMs: number;
  /**
   * `GATEWAY_PUBLIC_URL`: the address clients and webhook receivers reach this gateway at, the base of signed media
   * URLs (`file_url`); null: http://HOST:PORT as it listens (docs/api.md, Media).
   */
  readonly publicUrl: string | null;
  /** `GATEWAY_INCOMING_MEDIA_MAX_MB`: incoming media larger than this is not downloaded (`too_large`). */
  readonly incomingMediaMaxMb: number;
  /** `GATEWAY_INCOMING_MEDIA_RETENTION_DAYS`: days incoming media is kept (then `expired`); 0 keeps it. */
  readonly incomingMediaRetentionDays: number;
  /** `GATEWAY_MEDIA_URL_TTL_S`: how long a signed media URL stays valid. */
  readonly mediaUrlTtlS: number;
  /** Message brokers every event is published to (DECISIONS 17, docs/brokers.md); each null when unset. */
  readonly brokers: BrokersConfig;
}

/** `GATEWAY_AMQP_*` and `GATEWAY_NATS_*`: where events are published besides webhooks and streams. */
export interface BrokersConfig {
  /** RabbitMQ: `GATEWAY_AMQP_URL` (amqp:// or amqps://) and the topic exchange `GATEWAY_AMQP_EXCHANGE`. */
  readonly amqp: { readonly url: string; readonly exchange: string } | null;
  /** NATS JetStream: `GATEWAY_NATS_URL`, the stream `GATEWAY_NATS_STREAM`, subjects under `GATEWAY_NATS_SUBJECT_PREFIX`. */
  readonly nats: { readonly url: string; readonly stream: string; readonly subjectPrefix: string } | null;
}

/** The key that seals network state, and the earlier ones still accepted for reading while rows are re-sealed. */
export interface NetworkKeys {
  readonly current: Buffer;
  readonly previous: readonly Buffer[];
}

export interface HttpLimits {
  /** The whole request (headers and body) must arrive within this; otherwise 408. */
  readonly requestTimeoutMs: number;
  /** The request headers must arrive within this (never more than requestTimeoutMs); otherwise 408. */
  readonly headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** Connections held at once; further ones are closed at once until some end. */
  readonly maxConnections: number;
  /**
   * Connections one client address (an IPv6 /64) may hold at once, at most maxConnections; further ones
   * from it are closed at once, so one client never takes every slot (docs/hardening.md, also behind a proxy).
   */
  readonly maxConnectionsPerAddress: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function network(env: Env): string {
  const raw = text(env, 'GATEWAY_NETWORK') ?? 'sandbox';
  if (raw === 'sandbox' || raw === 'whatsapp') return raw;
  if (/^sandbox\+wss?:\/\/[^\s]+$/.test(raw)) return raw;
  throw new ConfigError(`GATEWAY_NETWORK must be "sandbox", "sandbox+ws://host:port" or "whatsapp", got "${raw}"`);
}

/** Bytes a network key must have: AES-256. */
export const NETWORK_KEY_BYTES = 32;

function oneKey(name: string, raw: string): Buffer {
  // Strict base64 (standard or URL-safe alphabet), so a truncated or mistyped key is refused, never padded silently.
  const decoded = /^[A-Za-z0-9+/_-]+={0,2}$/.test(raw) ? Buffer.from(raw, 'base64') : null;
  if (decoded === null || decoded.length !== NETWORK_KEY_BYTES) {
    // The value is a secret: say what is wrong with it, never repeat it.
    throw new ConfigError(
      `${name} must be ${NETWORK_KEY_BYTES} random bytes in base64 (44 characters); run "gateway keygen" to make one`,
    );
  }
  return decoded;
}

function networkKeys(env: Env, network: string): NetworkKeys | null {
  const raw = text(env, 'GATEWAY_NETWORK_KEY');
  const previousRaw = text(env, 'GATEWAY_NETWORK_KEY_PREVIOUS');
  if (raw === undefined) {
    if (network === 'whatsapp') {
      throw new ConfigError(
        'GATEWAY_NETWORK_KEY is required with GATEWAY_NETWORK=whatsapp (it seals the stored sessions); run "gateway keygen" to make one',
      );
    }
    if (previousRaw !== undefined) throw new ConfigError('GATEWAY_NETWORK_KEY_PREVIOUS needs GATEWAY_NETWORK_KEY');
    return null;
  }
  const current = oneKey('GATEWAY_NETWORK_KEY', raw);
  const previous = (previousRaw ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => oneKey('GATEWAY_NETWORK_KEY_PREVIOUS', part));
  return { current, previous };
}

function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'loopback';
}

// Both settings exist for a local stand-in of WhatsApp (docs/standin.md). Pointing a gateway at another host, or
// trusting another certificate root, would hand its users' sessions to whoever runs that host: refused.
function whatsappUrl(env: Env): string | null {
  const raw = text(env, 'GATEWAY_WHATSAPP_URL');
  if (raw === undefined) return null;
  let url: URL | undefined;
  try {
    url = /^wss?:\/\/[^\s]+$/.test(raw) ? new URL(raw) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined) throw new ConfigError(`GATEWAY_WHATSAPP_URL must be a ws:// or wss:// URL, got "${raw}"`);
  if (!isLoopbackHost(url.hostname))
    throw new ConfigError(
      `GATEWAY_WHATSAPP_URL must point at this machine (127.0.0.0/8, ::1 or localhost): it is for a local stand-in, got "${raw}"`,
    );
  return raw;
}

function whatsappVersion(env: Env): { whatsappVersion?: readonly [number, number, number] } {
  const raw = text(env, 'GATEWAY_WHATSAPP_VERSION');
  if (raw === undefined) return {};
  const parts = /^(\d{1,4})\.(\d{1,6})\.(\d{1,12})$/.exec(raw);
  if (parts === null) {
    throw new ConfigError(`GATEWAY_WHATSAPP_VERSION must be three numbers like 2.3000.1234567, got "${raw}"`);
  }
  return { whatsappVersion: [Number(parts[1]), Number(parts[2]), Number(parts[3])] };
}

function whatsappRootKey(env: Env, url: string | null): Buffer | null {
  const raw = text(env, 'GATEWAY_WHATSAPP_ROOT_KEY');
  if (raw === undefined) return null;
  if (url === null)
    throw new ConfigError(
      'GATEWAY_WHATSAPP_ROOT_KEY needs GATEWAY_WHATSAPP_URL on this machine: it is for a local stand-in',
    );
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(raw) ? Buffer.from(raw, 'base64') : Buffer.alloc(0);
  if (key.length !== 32)
    throw new ConfigError(`GATEWAY_WHATSAPP_ROOT_KEY must be a 32-byte Curve25519 public key in base64, got "${raw}"`);
  return key;
}

function whatsappNativeInteractive(env: Env, network: string): boolean {
  const value = boolean(env, 'GATEWAY_WHATSAPP_NATIVE_INTERACTIVE', false);
  // Refused rather than ignored: someone who set it expects it to do something.
  if (value && network !== 'whatsapp') {
    throw new ConfigError('GATEWAY_WHATSAPP_NATIVE_INTERACTIVE=true needs GATEWAY_NETWORK=whatsapp');
  }
  return value;
}

function databaseUrl(env: Env): string | null {
  const raw = text(env, 'DATABASE_URL');
  if (raw === undefined) return null;
  if (!/^postgres(ql)?:\/\//.test(raw)) {
    throw new ConfigError(
      'DATABASE_URL must start with postgres:// (leave it unset for SQLite under GATEWAY_DATA_DIR)',
    );
  }
  return raw;
}

function serverName(env: Env): string {
  const name = text(env, 'GATEWAY_SERVER_NAME') ?? hostname();
  // Shown in every device object and used as a node's identity in a cluster: printable, short.
  if (name.length > 64 || !/^[A-Za-z0-9._-]+$/.test(name)) {
    throw new ConfigError(
      `GATEWAY_SERVER_NAME must be 1 to 64 letters, digits, dots, dashes or underscores, got "${name.slice(0, 80)}"`,
    );
  }
  return name;
}

function advertiseUrl(env: Env, name = 'GATEWAY_ADVERTISE_URL'): string | null {
  const raw = text(env, name);
  if (raw === undefined) return null;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new ConfigError(`${name} must be an http:// or https:// URL, got "${raw}"`);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigError(`${name} must have no query, fragment or credentials`);
  }
  return url.toString().replace(/\/+$/, '');
}

function allowedPrivateHosts(env: Env): string[] {
  try {
    return parseAllowedPrivateHosts(env.GATEWAY_ALLOWED_PRIVATE_HOSTS ?? '');
  } catch (error) {
    if (error instanceof AllowListError) {
      throw new ConfigError(
        `GATEWAY_ALLOWED_PRIVATE_HOSTS: ${error.message} (list host names and CIDRs, comma-separated)`,
      );
    }
    throw error;
  }
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const bootstrapToken = text(env, 'GATEWAY_BOOTSTRAP_TOKEN') ?? null;
  if (bootstrapToken !== null && (bootstrapToken.length < 16 || /\s/.test(bootstrapToken))) {
    throw new ConfigError('GATEWAY_BOOTSTRAP_TOKEN must be at least 16 characters with no spaces');
  }
  const chosenNetwork = network(env);
  // Checked before any other value is used: without a key nothing of the real network can be stored.
  const networkKey = networkKeys(env, chosenNetwork);
  const standinUrl = whatsappUrl(env);
  return {
    host: text(env, 'HOST') ?? '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    dataDir: resolve(text(env, 'GATEWAY_DATA_DIR') ?? './data'),
    databaseUrl: databaseUrl(env),
    network: chosenNetwork,
    bootstrapToken,
    allowPrivateUrls: boolean(env, 'GATEWAY_ALLOW_PRIVATE_URLS', false),
    allowedPrivateHosts: allowedPrivateHosts(env),
    sendIntervalMs: integer(env, 'GATEWAY_SEND_INTERVAL_MS', 1000, 0, 3_600_000),
    pairingWindowS: integer(env, 'GATEWAY_PAIRING_WINDOW_S', 120, 1, 86_400),
    serverName: serverName(env),
    advertiseUrl: advertiseUrl(env),
    logLevel: logLevel as LogLevel,
    webhookRetentionDays: integer(env, 'GATEWAY_WEBHOOK_RETENTION_DAYS', 7, 0, 36_500),
    webhookInFlight: integer(env, 'GATEWAY_WEBHOOK_IN_FLIGHT', 4, 1, 64),
    messageRetentionDays: integer(env, 'GATEWAY_MESSAGE_RETENTION_DAYS', 0, 0, 36_500),
    historyDays: integer(env, 'GATEWAY_HISTORY_DAYS', 7, 0, 3_650),
    eventRetentionDays: integer(env, 'GATEWAY_EVENT_RETENTION_DAYS', 7, 0, 36_500),
    http: httpLimits(env),
    networkKey,
    whatsappUrl: standinUrl,
    ...whatsappVersion(env),
    whatsappRootKey: whatsappRootKey(env, standinUrl),
    whatsappNativeInteractive: whatsappNativeInteractive(env, chosenNetwork),
    whatsappAckTimeoutMs: integer(env, 'GATEWAY_WHATSAPP_ACK_TIMEOUT_MS', 20_000, 1_000, 600_000),
    whatsappUploadTimeoutMs: integer(env, 'GATEWAY_WHATSAPP_UPLOAD_TIMEOUT_MS', 60_000, 1_000, 600_000),
    publicUrl: advertiseUrl(env, 'GATEWAY_PUBLIC_URL'),
    incomingMediaMaxMb: integer(env, 'GATEWAY_INCOMING_MEDIA_MAX_MB', 64, 1, 2048),
    incomingMediaRetentionDays: integer(env, 'GATEWAY_INCOMING_MEDIA_RETENTION_DAYS', 30, 0, 36_500),
    mediaUrlTtlS: integer(env, 'GATEWAY_MEDIA_URL_TTL_S', 86_400, 60, 31_536_000),
    brokers: brokers(env),
  };
}

function brokerUrl(env: Env, name: string, schemes: readonly string[]): string | null {
  const raw = text(env, name);
  if (raw === undefined) return null;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (url === null || !schemes.includes(url.protocol) || url.hostname === '') {
    // The URL may carry a password: name what is wrong, never repeat it.
    throw new ConfigError(
      `${name} must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}, with a host`,
    );
  }
  return raw;
}

/** A name made of dot-separated words (an exchange, a subject prefix): no spaces, no wildcards. */
function brokerName(env: Env, name: string, fallback: string, pattern: RegExp, what: string): string {
  const value = text(env, name) ?? fallback;
  if (value.length > 200 || !pattern.test(value)) throw new ConfigError(`${name} must be ${what}, got "${value}"`);
  return value;
}

function brokers(env: Env): BrokersConfig {
  const amqpUrl = brokerUrl(env, 'GATEWAY_AMQP_URL', ['amqp:', 'amqps:']);
  const natsUrl = brokerUrl(env, 'GATEWAY_NATS_URL', ['nats:', 'tls:']);
  const word = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
  const exchange = brokerName(
    env,
    'GATEWAY_AMQP_EXCHANGE',
    'gateway.events',
    /^[A-Za-z0-9._:-]+$/,
    'letters, digits, . _ : -',
  );
  const stream = brokerName(
    env,
    'GATEWAY_NATS_STREAM',
    'GATEWAY_EVENTS',
    /^[A-Za-z0-9_-]+$/,
    'letters, digits, _ or -',
  );
  const prefix = brokerName(
    env,
    'GATEWAY_NATS_SUBJECT_PREFIX',
    'gateway.events',
    word,
    'dot-separated words (letters, digits, _ or -)',
  );
  return {
    amqp: amqpUrl === null ? null : { url: amqpUrl, exchange },
    nats: natsUrl === null ? null : { url: natsUrl, stream, subjectPrefix: prefix },
  };
}

function httpLimits(env: Env): HttpLimits {
  const requestTimeoutMs = integer(env, 'GATEWAY_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  const maxConnections = integer(env, 'GATEWAY_MAX_CONNECTIONS', 512, 1, 1_000_000);
  // Half the slots by default: one client (or one proxy in front of a single node) still has hundreds.
  const perAddress = integer(env, 'GATEWAY_MAX_CONNECTIONS_PER_IP', Math.ceil(maxConnections / 2), 1, 1_000_000);
  return {
    requestTimeoutMs,
    // Node refuses a header timeout above the request timeout; the smaller one is what would apply anyway.
    headersTimeoutMs: Math.min(integer(env, 'GATEWAY_HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000), requestTimeoutMs),
    keepAliveTimeoutMs: integer(env, 'GATEWAY_IDLE_TIMEOUT_MS', 10_000, 100, 3_600_000),
    maxConnections,
    // Above the total it could never apply: the total is then the only cap, as with a value equal to it.
    maxConnectionsPerAddress: Math.min(perAddress, maxConnections),
  };
}

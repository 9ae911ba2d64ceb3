// docs/internals.md, Running and operating: settings come from the environment, have sensible defaults, and
// a bad value stops start-up with a message naming the variable.
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

const KEY_A = Buffer.alloc(32, 0xa1).toString('base64');
const KEY_B = Buffer.alloc(32, 0xb2).toString('base64');
const KEY_C = Buffer.alloc(32, 0xc3).toString('base64');

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has the documented defaults with an empty environment', () => {
    expect(loadConfig({})).toEqual({
      host: '127.0.0.1',
      port: 3000,
      dataDir: resolve('./data'),
      databaseUrl: null,
      network: 'sandbox',
      bootstrapToken: null,
      allowPrivateUrls: false,
      allowedPrivateHosts: [],
      sendIntervalMs: 1000,
      pairingWindowS: 120,
      serverName: hostname(),
      advertiseUrl: null,
      logLevel: 'info',
      http: {
        requestTimeoutMs: 30_000,
        headersTimeoutMs: 10_000,
        keepAliveTimeoutMs: 10_000,
        maxConnections: 512,
        maxConnectionsPerAddress: 256,
      },
      webhookRetentionDays: 7,
      webhookInFlight: 4,
      messageRetentionDays: 0,
      historyDays: 7,
      eventRetentionDays: 7,
      networkKey: null,
      whatsappUrl: null,
      whatsappRootKey: null,
      whatsappNativeInteractive: false,
      whatsappAckTimeoutMs: 20_000,
      whatsappUploadTimeoutMs: 60_000,
      publicUrl: null,
      incomingMediaMaxMb: 64,
      incomingMediaRetentionDays: 30,
      mediaUrlTtlS: 86_400,
      brokers: { amqp: null, nats: null },
    });
  });

  it('reads the HTTP limits, keeping the header timeout within the request timeout', () => {
    expect(
      loadConfig({
        GATEWAY_REQUEST_TIMEOUT_MS: '5000',
        GATEWAY_HEADERS_TIMEOUT_MS: '8000',
        GATEWAY_IDLE_TIMEOUT_MS: '65000',
        GATEWAY_MAX_CONNECTIONS: '2000',
      }).http,
    ).toEqual({
      requestTimeoutMs: 5000,
      headersTimeoutMs: 5000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 2000,
      maxConnectionsPerAddress: 1000,
    });
    expect(configError({ GATEWAY_MAX_CONNECTIONS: '0' }).message).toBe(
      'GATEWAY_MAX_CONNECTIONS must be between 1 and 1000000, got 0',
    );
    // The per-address cap: given, at most the total, never 0.
    expect(loadConfig({ GATEWAY_MAX_CONNECTIONS_PER_IP: '16' }).http.maxConnectionsPerAddress).toBe(16);
    expect(
      loadConfig({ GATEWAY_MAX_CONNECTIONS: '100', GATEWAY_MAX_CONNECTIONS_PER_IP: '5000' }).http
        .maxConnectionsPerAddress,
    ).toBe(100);
    expect(configError({ GATEWAY_MAX_CONNECTIONS_PER_IP: '0' }).message).toBe(
      'GATEWAY_MAX_CONNECTIONS_PER_IP must be between 1 and 1000000, got 0',
    );
    expect(configError({ GATEWAY_MAX_CONNECTIONS_PER_IP: 'ten' }).message).toBe(
      'GATEWAY_MAX_CONNECTIONS_PER_IP must be a whole number, got "ten"',
    );
    expect(configError({ GATEWAY_REQUEST_TIMEOUT_MS: '1s' }).message).toBe(
      'GATEWAY_REQUEST_TIMEOUT_MS must be a whole number, got "1s"',
    );
  });

  it('treats empty and blank values as unset', () => {
    expect(loadConfig({ PORT: '', HOST: '  ', LOG_LEVEL: '', DATABASE_URL: '' })).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      logLevel: 'info',
      databaseUrl: null,
    });
  });

  it('reads every setting', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '0',
      GATEWAY_DATA_DIR: '/tmp/gw-data',
      DATABASE_URL: 'postgres://u:p@db:5432/gw',
      GATEWAY_NETWORK: 'sandbox+ws://127.0.0.1:4000',
      GATEWAY_BOOTSTRAP_TOKEN: 'mgw_0123456789abcdef',
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      GATEWAY_ALLOWED_PRIVATE_HOSTS: 'n8n, 10.0.0.0/8',
      GATEWAY_SEND_INTERVAL_MS: '0',
      GATEWAY_PAIRING_WINDOW_S: '30',
      GATEWAY_SERVER_NAME: 'node-7',
      LOG_LEVEL: 'DEBUG',
      GATEWAY_WEBHOOK_RETENTION_DAYS: '30',
      GATEWAY_WEBHOOK_IN_FLIGHT: '64',
      GATEWAY_MESSAGE_RETENTION_DAYS: '90',
      GATEWAY_HISTORY_DAYS: '30',
      GATEWAY_EVENT_RETENTION_DAYS: '3',
      GATEWAY_WHATSAPP_ACK_TIMEOUT_MS: '30000',
      GATEWAY_PUBLIC_URL: 'https://gw.example.com/',
      GATEWAY_INCOMING_MEDIA_MAX_MB: '16',
      GATEWAY_INCOMING_MEDIA_RETENTION_DAYS: '0',
      GATEWAY_MEDIA_URL_TTL_S: '3600',
    });
    expect(config).toEqual({
      host: '0.0.0.0',
      port: 0,
      dataDir: '/tmp/gw-data',
      databaseUrl: 'postgres://u:p@db:5432/gw',
      network: 'sandbox+ws://127.0.0.1:4000',
      bootstrapToken: 'mgw_0123456789abcdef',
      allowPrivateUrls: true,
      allowedPrivateHosts: ['n8n', '10.0.0.0/8'],
      sendIntervalMs: 0,
      pairingWindowS: 30,
      serverName: 'node-7',
      advertiseUrl: null,
      logLevel: 'debug',
      http: loadConfig({}).http,
      webhookRetentionDays: 30,
      webhookInFlight: 64,
      messageRetentionDays: 90,
      historyDays: 30,
      eventRetentionDays: 3,
      networkKey: null,
      whatsappUrl: null,
      whatsappRootKey: null,
      whatsappNativeInteractive: false,
      whatsappAckTimeoutMs: 30_000,
      whatsappUploadTimeoutMs: 60_000,
      publicUrl: 'https://gw.example.com',
      incomingMediaMaxMb: 16,
      incomingMediaRetentionDays: 0,
      mediaUrlTtlS: 3_600,
      brokers: { amqp: null, nats: null },
    });
  });

  it('reads GATEWAY_ADVERTISE_URL and checks GATEWAY_SERVER_NAME (a node name of a cluster)', () => {
    expect(loadConfig({ GATEWAY_ADVERTISE_URL: 'http://10.0.0.5:3000/' }).advertiseUrl).toBe('http://10.0.0.5:3000');
    expect(loadConfig({ GATEWAY_ADVERTISE_URL: 'https://node-a.internal/gw' }).advertiseUrl).toBe(
      'https://node-a.internal/gw',
    );
    expect(configError({ GATEWAY_ADVERTISE_URL: 'node-a:3000' }).message).toBe(
      'GATEWAY_ADVERTISE_URL must be an http:// or https:// URL, got "node-a:3000"',
    );
    expect(configError({ GATEWAY_ADVERTISE_URL: 'http://u:p@node-a:3000' }).message).toBe(
      'GATEWAY_ADVERTISE_URL must have no query, fragment or credentials',
    );
    expect(loadConfig({ GATEWAY_SERVER_NAME: 'gw-1.eu_west' }).serverName).toBe('gw-1.eu_west');
    expect(configError({ GATEWAY_SERVER_NAME: 'node a' }).message).toBe(
      'GATEWAY_SERVER_NAME must be 1 to 64 letters, digits, dots, dashes or underscores, got "node a"',
    );
    expect(configError({ GATEWAY_SERVER_NAME: 'n'.repeat(65) }).message).toMatch(
      /^GATEWAY_SERVER_NAME must be 1 to 64/,
    );
  });

  it('reads GATEWAY_WHATSAPP_URL (a local stand-in for WhatsApp Web)', () => {
    expect(loadConfig({ GATEWAY_WHATSAPP_URL: 'ws://127.0.0.1:4567/ws/chat' }).whatsappUrl).toBe(
      'ws://127.0.0.1:4567/ws/chat',
    );
  });

  it('reads GATEWAY_WHATSAPP_ROOT_KEY (the certificate root of a stand-in) as 32 bytes, with a loopback URL only', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const local = { GATEWAY_WHATSAPP_URL: 'ws://127.0.0.1:4567/ws/chat', GATEWAY_WHATSAPP_ROOT_KEY: key };
    expect(loadConfig(local).whatsappRootKey).toEqual(Buffer.alloc(32, 7));
    expect(loadConfig({}).whatsappRootKey).toBeNull();
    for (const url of ['ws://localhost:1/ws/chat', 'ws://127.8.9.10:1/ws/chat', 'ws://[::1]:1/ws/chat'])
      expect(loadConfig({ ...local, GATEWAY_WHATSAPP_URL: url }).whatsappUrl).toBe(url);
  });

  it.each([
    [{ GATEWAY_WHATSAPP_URL: 'wss://web.example.com/ws/chat' }, 'GATEWAY_WHATSAPP_URL'],
    [{ GATEWAY_WHATSAPP_URL: 'ws://10.0.0.5:1/ws/chat' }, 'GATEWAY_WHATSAPP_URL'],
    [{ GATEWAY_WHATSAPP_URL: 'ws://127.0.0.1.example.com/ws/chat' }, 'GATEWAY_WHATSAPP_URL'],
    [{ GATEWAY_WHATSAPP_ROOT_KEY: Buffer.alloc(32).toString('base64') }, 'GATEWAY_WHATSAPP_ROOT_KEY'],
    [
      {
        GATEWAY_WHATSAPP_URL: 'ws://127.0.0.1:1/ws/chat',
        GATEWAY_WHATSAPP_ROOT_KEY: Buffer.alloc(31).toString('base64'),
      },
      'GATEWAY_WHATSAPP_ROOT_KEY',
    ],
    [
      { GATEWAY_WHATSAPP_URL: 'ws://127.0.0.1:1/ws/chat', GATEWAY_WHATSAPP_ROOT_KEY: 'not base64!' },
      'GATEWAY_WHATSAPP_ROOT_KEY',
    ],
  ])('refuses a stand-in setting that could point at anything but this machine: %j', (env, name) => {
    const error = configError(env);
    expect(error.name).toBe('ConfigError');
    expect(error.message).toContain(name);
  });

  it('reads GATEWAY_WHATSAPP_NATIVE_INTERACTIVE with the whatsapp network only (docs/internals.md, WhatsApp and sandbox accounts, experimental)', () => {
    const whatsapp = { GATEWAY_NETWORK: 'whatsapp', GATEWAY_NETWORK_KEY: KEY_A };
    expect(loadConfig(whatsapp).whatsappNativeInteractive).toBe(false);
    expect(loadConfig({ ...whatsapp, GATEWAY_WHATSAPP_NATIVE_INTERACTIVE: 'true' }).whatsappNativeInteractive).toBe(
      true,
    );
    expect(loadConfig({ ...whatsapp, GATEWAY_WHATSAPP_NATIVE_INTERACTIVE: 'no' }).whatsappNativeInteractive).toBe(
      false,
    );
    expect(configError({ ...whatsapp, GATEWAY_WHATSAPP_NATIVE_INTERACTIVE: 'native' }).message).toBe(
      'GATEWAY_WHATSAPP_NATIVE_INTERACTIVE must be true or false, got "native"',
    );
    expect(configError({ GATEWAY_WHATSAPP_NATIVE_INTERACTIVE: 'true' }).message).toBe(
      'GATEWAY_WHATSAPP_NATIVE_INTERACTIVE=true needs GATEWAY_NETWORK=whatsapp',
    );
    // Off is always fine, whatever the network.
    expect(loadConfig({ GATEWAY_WHATSAPP_NATIVE_INTERACTIVE: 'false' }).whatsappNativeInteractive).toBe(false);
  });

  it('reads GATEWAY_WHATSAPP_ACK_TIMEOUT_MS and GATEWAY_WHATSAPP_UPLOAD_TIMEOUT_MS (docs/whatsapp.md), 1 s to 10 min', () => {
    expect(loadConfig({ GATEWAY_WHATSAPP_ACK_TIMEOUT_MS: '45000' }).whatsappAckTimeoutMs).toBe(45_000);
    expect(loadConfig({ GATEWAY_WHATSAPP_UPLOAD_TIMEOUT_MS: '5000' }).whatsappUploadTimeoutMs).toBe(5_000);
    expect(() => loadConfig({ GATEWAY_WHATSAPP_UPLOAD_TIMEOUT_MS: '10' })).toThrow(
      /GATEWAY_WHATSAPP_UPLOAD_TIMEOUT_MS/,
    );
    expect(configError({ GATEWAY_WHATSAPP_ACK_TIMEOUT_MS: '999' }).message).toBe(
      'GATEWAY_WHATSAPP_ACK_TIMEOUT_MS must be between 1000 and 600000, got 999',
    );
    expect(configError({ GATEWAY_WHATSAPP_ACK_TIMEOUT_MS: '20s' }).message).toBe(
      'GATEWAY_WHATSAPP_ACK_TIMEOUT_MS must be a whole number, got "20s"',
    );
  });

  it('resolves a relative data directory against the working directory', () => {
    expect(loadConfig({ GATEWAY_DATA_DIR: 'some/dir' }).dataDir).toBe(resolve('some/dir'));
  });

  it.each([
    ['sandbox'],
    ['whatsapp', { GATEWAY_NETWORK_KEY: KEY_A }],
    ['sandbox+ws://127.0.0.1:4000'],
    ['sandbox+wss://sandbox.example:443'],
  ])('accepts GATEWAY_NETWORK=%s', (value, extra: Record<string, string> = {}) => {
    expect(loadConfig({ GATEWAY_NETWORK: value, ...extra }).network).toBe(value);
  });

  it.each([['postgres://x/db'], ['postgresql://user@host:5432/db']])('accepts DATABASE_URL=%s', (value) => {
    expect(loadConfig({ DATABASE_URL: value }).databaseUrl).toBe(value);
  });

  it.each([
    ['true', true],
    ['1', true],
    ['YES', true],
    ['false', false],
    ['0', false],
    ['no', false],
  ])('reads GATEWAY_ALLOW_PRIVATE_URLS=%s as %s', (value, expected) => {
    expect(loadConfig({ GATEWAY_ALLOW_PRIVATE_URLS: value }).allowPrivateUrls).toBe(expected);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '3000.5'],
    ['GATEWAY_NETWORK', 'foo'],
    ['GATEWAY_NETWORK', 'sandbox+http://127.0.0.1:4000'],
    ['DATABASE_URL', 'mysql://x'],
    ['GATEWAY_ALLOW_PRIVATE_URLS', 'maybe'],
    ['GATEWAY_ALLOWED_PRIVATE_HOSTS', 'n8n,http://hooks.lan'],
    ['GATEWAY_ALLOWED_PRIVATE_HOSTS', '10.0.0.0/40'],
    ['LOG_LEVEL', 'loud'],
    ['GATEWAY_BOOTSTRAP_TOKEN', 'short'],
    ['GATEWAY_BOOTSTRAP_TOKEN', 'mgw_has some spaces in it'],
    ['GATEWAY_SEND_INTERVAL_MS', '-5'],
    ['GATEWAY_SEND_INTERVAL_MS', 'fast'],
    ['GATEWAY_PAIRING_WINDOW_S', '0'],
    ['GATEWAY_PAIRING_WINDOW_S', '86401'],
    ['GATEWAY_WEBHOOK_RETENTION_DAYS', '-1'],
    ['GATEWAY_WEBHOOK_RETENTION_DAYS', 'a week'],
    ['GATEWAY_WEBHOOK_IN_FLIGHT', '0'],
    ['GATEWAY_WEBHOOK_IN_FLIGHT', '65'],
    ['GATEWAY_WEBHOOK_IN_FLIGHT', 'many'],
    ['GATEWAY_MESSAGE_RETENTION_DAYS', '36501'],
    ['GATEWAY_MESSAGE_RETENTION_DAYS', '1.5'],
    ['GATEWAY_HISTORY_DAYS', '3651'],
    ['GATEWAY_HISTORY_DAYS', '-1'],
    ['GATEWAY_HISTORY_DAYS', 'seven'],
    ['GATEWAY_WHATSAPP_URL', 'http://127.0.0.1:1'],
  ])('refuses %s=%j with a ConfigError naming the variable', (name, value) => {
    const error = configError({ [name]: value });
    expect(error.name).toBe('ConfigError');
    expect(error.message).toContain(name);
  });

  it('says what was wrong with the value', () => {
    expect(configError({ PORT: 'abc' }).message).toBe('PORT must be a whole number, got "abc"');
    expect(configError({ PORT: '70000' }).message).toBe('PORT must be between 0 and 65535, got 70000');
    expect(configError({ GATEWAY_PAIRING_WINDOW_S: '0' }).message).toMatch(/between 1 and/);
    expect(configError({ GATEWAY_ALLOWED_PRIVATE_HOSTS: 'n8n, 10.0.0.0/40' }).message).toBe(
      'GATEWAY_ALLOWED_PRIVATE_HOSTS: "10.0.0.0/40" is neither a host name nor an IP address or CIDR ' +
        '(list host names and CIDRs, comma-separated)',
    );
  });

  it('never repeats a refused bootstrap token in its message', () => {
    const secret = 'mgw_secret with space';
    expect(configError({ GATEWAY_BOOTSTRAP_TOKEN: secret }).message).not.toContain('secret with');
  });

  describe('GATEWAY_NETWORK_KEY (docs/internals.md, WhatsApp and sandbox accounts)', () => {
    it('is required with GATEWAY_NETWORK=whatsapp, and the message names it', () => {
      expect(configError({ GATEWAY_NETWORK: 'whatsapp' }).message).toBe(
        'GATEWAY_NETWORK_KEY is required with GATEWAY_NETWORK=whatsapp (it seals the stored sessions); run "gateway keygen" to make one',
      );
      expect(configError({ GATEWAY_NETWORK: 'whatsapp', GATEWAY_NETWORK_KEY: '   ' }).message).toMatch(
        /^GATEWAY_NETWORK_KEY is required/,
      );
    });

    it('reads 32 bytes of base64, with or without padding, standard or URL-safe', () => {
      const bytes = Buffer.from(KEY_A, 'base64');
      for (const form of [KEY_A, KEY_A.replace(/=+$/, ''), bytes.toString('base64url')]) {
        const config = loadConfig({ GATEWAY_NETWORK: 'whatsapp', GATEWAY_NETWORK_KEY: form });
        expect(config.networkKey).toEqual({ current: bytes, previous: [] });
      }
    });

    it('reads previous keys, comma-separated, for rows sealed before a rotation', () => {
      const config = loadConfig({
        GATEWAY_NETWORK: 'whatsapp',
        GATEWAY_NETWORK_KEY: KEY_A,
        GATEWAY_NETWORK_KEY_PREVIOUS: ` ${KEY_B} , ${KEY_C}`,
      });
      expect(config.networkKey?.previous).toEqual([Buffer.from(KEY_B, 'base64'), Buffer.from(KEY_C, 'base64')]);
    });

    it('is optional for the sandbox, and kept when given', () => {
      expect(loadConfig({}).networkKey).toBeNull();
      expect(loadConfig({ GATEWAY_NETWORK_KEY: KEY_A }).networkKey?.current).toEqual(Buffer.from(KEY_A, 'base64'));
    });

    it.each([
      ['too short', Buffer.alloc(16, 1).toString('base64')],
      ['too long', Buffer.alloc(33, 1).toString('base64')],
      ['not base64', '!'.repeat(44)],
      ['base64 with a space inside', `${KEY_A.slice(0, 20)} ${KEY_A.slice(20)}`],
      ['hex instead of base64', Buffer.alloc(32, 7).toString('hex')],
    ])('refuses a key that is %s, without repeating it', (_what, value) => {
      const error = configError({ GATEWAY_NETWORK: 'whatsapp', GATEWAY_NETWORK_KEY: value });
      expect(error.message).toBe(
        'GATEWAY_NETWORK_KEY must be 32 random bytes in base64 (44 characters); run "gateway keygen" to make one',
      );
      expect(error.message).not.toContain(value.trim());
    });

    it('refuses a malformed previous key, and previous keys without a current one', () => {
      expect(
        configError({ GATEWAY_NETWORK_KEY: KEY_A, GATEWAY_NETWORK_KEY_PREVIOUS: `${KEY_B},nope` }).message,
      ).toMatch(/^GATEWAY_NETWORK_KEY_PREVIOUS must be 32 random bytes/);
      expect(configError({ GATEWAY_NETWORK_KEY_PREVIOUS: KEY_B }).message).toBe(
        'GATEWAY_NETWORK_KEY_PREVIOUS needs GATEWAY_NETWORK_KEY',
      );
    });
  });

  it('never repeats a refused database URL (it may hold a password)', () => {
    expect(configError({ DATABASE_URL: 'mysql://root:hunter2@db/x' }).message).not.toContain('hunter2');
  });

  it('reads the brokers (DECISIONS 17): each only when its URL is set, with the documented defaults', () => {
    expect(
      loadConfig({ GATEWAY_AMQP_URL: 'amqp://u:p@rabbit:5672/vh', GATEWAY_NATS_URL: 'nats://nats:4222' }).brokers,
    ).toEqual({
      amqp: { url: 'amqp://u:p@rabbit:5672/vh', exchange: 'gateway.events' },
      nats: { url: 'nats://nats:4222', stream: 'GATEWAY_EVENTS', subjectPrefix: 'gateway.events' },
    });
    expect(
      loadConfig({
        GATEWAY_AMQP_URL: 'amqps://rabbit',
        GATEWAY_AMQP_EXCHANGE: 'crm.events',
        GATEWAY_NATS_URL: 'tls://nats:4222',
        GATEWAY_NATS_STREAM: 'CRM_EVENTS',
        GATEWAY_NATS_SUBJECT_PREFIX: 'crm.wa',
      }).brokers,
    ).toEqual({
      amqp: { url: 'amqps://rabbit', exchange: 'crm.events' },
      nats: { url: 'tls://nats:4222', stream: 'CRM_EVENTS', subjectPrefix: 'crm.wa' },
    });
    // The names alone publish nowhere.
    expect(loadConfig({ GATEWAY_AMQP_EXCHANGE: 'x', GATEWAY_NATS_STREAM: 'Y' }).brokers).toEqual({
      amqp: null,
      nats: null,
    });
  });

  it('refuses a broker URL of another scheme without repeating it, and names that are not names', () => {
    const amqp = configError({ GATEWAY_AMQP_URL: 'http://guest:hunter2@rabbit' }).message;
    expect(amqp).not.toContain('hunter2');
    expect(amqp).toBe('GATEWAY_AMQP_URL must be a URL starting with amqp:// or amqps://, with a host');
    expect(configError({ GATEWAY_NATS_URL: 'rabbit:4222' }).message).toBe(
      'GATEWAY_NATS_URL must be a URL starting with nats:// or tls://, with a host',
    );
    expect(configError({ GATEWAY_NATS_SUBJECT_PREFIX: 'gateway.*' }).message).toBe(
      'GATEWAY_NATS_SUBJECT_PREFIX must be dot-separated words (letters, digits, _ or -), got "gateway.*"',
    );
    expect(configError({ GATEWAY_NATS_SUBJECT_PREFIX: 'gateway..events' }).message).toContain('dot-separated');
    expect(configError({ GATEWAY_NATS_STREAM: 'GATEWAY.EVENTS' }).message).toBe(
      'GATEWAY_NATS_STREAM must be letters, digits, _ or -, got "GATEWAY.EVENTS"',
    );
    expect(configError({ GATEWAY_AMQP_EXCHANGE: 'gateway events' }).message).toBe(
      'GATEWAY_AMQP_EXCHANGE must be letters, digits, . _ : -, got "gateway events"',
    );
  });
});

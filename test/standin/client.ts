// A linked device for the stand-in's own tests: the pinned library, unmodified, with its auth state in memory,
// pointed at the stand-in and trusting its certificate root.
import makeWASocket, {
  Browsers,
  WA_CERT_DETAILS,
  addTransactionCapability,
  initAuthCreds,
  proto,
  type AuthenticationCreds,
  type SignalDataSet,
  type SignalKeyStore,
  type WASocket,
} from 'baileys';
import pino from 'pino';
import type { Standin } from '../../standin/server.js';

export interface Device {
  creds: AuthenticationCreds;
  keys: SignalKeyStore;
  socket?: WASocket;
}

function memoryKeys(): SignalKeyStore {
  const data = new Map<string, unknown>();
  return {
    get: async (type, ids) => {
      const out: Record<string, any> = {};
      for (const id of ids) if (data.has(`${type}/${id}`)) out[id] = data.get(`${type}/${id}`);
      return out;
    },
    set: async (set: SignalDataSet) => {
      for (const [type, values] of Object.entries(set))
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value == null) data.delete(`${type}/${id}`);
          else data.set(`${type}/${id}`, value);
        }
    },
  };
}

const logger = pino({ level: process.env.STANDIN_TEST_LOG ?? 'silent' });

export function newDevice(): Device {
  return { creds: initAuthCreds(), keys: memoryKeys() };
}

/** Opens one socket for the device; `creds.update` is applied to the device's creds. */
export function connect(standin: Standin, device: Device): WASocket {
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(standin.root_key, 'base64');
  const socket = makeWASocket({
    auth: {
      creds: device.creds,
      keys: addTransactionCapability(device.keys, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 10 }),
    },
    logger,
    waWebSocketUrl: standin.ws,
    browser: Browsers.ubuntu('Stand-in test'),
    markOnlineOnConnect: false,
    // As the gateway: its own sends are not echoed back as events (which would fold receipts into them).
    emitOwnEvents: false,
    syncFullHistory: false,
    // As the gateway does (src/network/whatsapp/socket-port.ts): the initial bootstrap only, so no 20 s wait.
    shouldSyncHistoryMessage: (m) => m.syncType === proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
    connectTimeoutMs: 10_000,
  });
  socket.ev.on('creds.update', (update) => Object.assign(device.creds, update));
  device.socket = socket;
  return socket;
}

/** Resolves with the next connection update that satisfies `test`. */
export function nextUpdate(socket: WASocket, test: (u: any) => boolean, timeoutMs = 15_000): Promise<any> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.ev.off('connection.update', on);
      reject(new Error('no such connection update in time'));
    }, timeoutMs);
    const on = (update: any) => {
      if (!test(update)) return;
      clearTimeout(timer);
      socket.ev.off('connection.update', on);
      resolve(update);
    };
    socket.ev.on('connection.update', on);
  });
}

export async function control(
  standin: Standin,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${standin.control}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Links a fresh device to `phone` by scanning its first QR, and waits for the session to open after the 515. */
export async function pairByQr(
  standin: Standin,
  phone: string,
  device: Device = newDevice(),
  onSocket: (socket: WASocket) => void = () => undefined,
): Promise<{ device: Device; socket: WASocket }> {
  const first = connect(standin, device);
  const { qr } = await nextUpdate(first, (u) => typeof u.qr === 'string');
  const closed = nextUpdate(first, (u) => u.connection === 'close');
  const scan = await control(standin, 'POST', '/control/scan', { qr, phone });
  if (scan.status !== 200) throw new Error(`scan failed: ${JSON.stringify(scan.body)}`);
  const close = await closed;
  if (close.lastDisconnect?.error?.output?.statusCode !== 515)
    throw new Error(`expected 515, got ${close.lastDisconnect?.error}`);
  const socket = connect(standin, device);
  onSocket(socket);
  await nextUpdate(socket, (u) => u.connection === 'open');
  return { device, socket };
}

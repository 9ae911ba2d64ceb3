// Benchmark: the WhatsApp connector against the WhatsApp stand-in (standin/, docs/standin.md). N devices
// (default 1,000) paired by QR and connected in one gateway process (the built dist/main.js, SQLite): RSS per
// live connection, the connect rate after a restart, and messages per second end to end (accepted over HTTP
// until every one is `delivered`, which takes the phone's delivery receipt), beside the same figure for the
// built-in sandbox network with the same devices and messages, in the same run.
//
//   npm run build && node --import tsx bench/standin.ts [devices] [messages] [concurrency]
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { startStandinProcess } from '../standin/spawn.js';
import { TOKEN, api, cpuMs, machine, pairDevice, startProcess, type Running } from './lib.js';
import { loadAverage, openBenchStore, type BenchStore } from './stores.js';

const devices = Number(process.argv[2] ?? 1000);
const total = Number(process.argv[3] ?? 5000);
const concurrency = Number(process.argv[4] ?? 20);

type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const jsQR: Decode = (jsQRModule as unknown as { default?: Decode }).default ?? (jsQRModule as unknown as Decode);

function qrText(dataUrl: string): string {
  const png = PNG.sync.read(Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ''), 'base64'));
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  if (code === null) throw new Error('no QR code in the image');
  return code.data;
}

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 600_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // A poll that fails at the network level (a keep-alive connection the server closed just then) is polled again.
    const value = await probe().catch((error: Error) => {
      if (Date.now() > deadline) throw error;
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(50);
  }
}

/** Runs `task` over `items` with at most `width` at a time. */
async function pool<T>(items: readonly T[], width: number, task: (item: T, i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await task(items[i]!, i);
      }
    }),
  );
}

/** Sends `total` chat messages from the devices (round robin) and times them until all are `delivered`. */
async function endToEnd(base: string, store: BenchStore, phones: readonly string[], receivers: readonly string[]) {
  let notConnected = 0;
  let resentAfterFailedConnection = 0;
  const before = await store.delivered();
  const started = Date.now();
  await pool(
    Array.from({ length: total }, (_, n) => n),
    concurrency,
    async (n) => {
      const body = {
        device: phones[n % phones.length],
        receiver: receivers[n % receivers.length],
        type: 'chat',
        params: { text: `message ${n}` },
      };
      // A device that is reconnecting answers 400 `Device not connected`, as the contract says; a client sends
      // again once it is back. A request whose connection failed (reset while the gateway was busy) is sent again
      // under the same Idempotency-Key, so it is accepted once however often it is sent. Both counted, and given up
      // after 5 minutes.
      const deadline = Date.now() + 300_000;
      const key = { 'idempotency-key': `bench-${started}-${n}` };
      for (;;) {
        try {
          await api(base, 'POST', '/messages', body, key);
          return;
        } catch (error) {
          const failedConnection = error instanceof TypeError; // fetch's "fetch failed": no HTTP answer
          if (!(failedConnection || /Device not connected/.test((error as Error).message)) || Date.now() > deadline)
            throw error;
          if (failedConnection) resentAfterFailedConnection += 1;
          else notConnected += 1;
          await sleep(500);
        }
      }
    },
  );
  const acceptedAt = Date.now();
  await until(async () => ((await store.delivered()) - before >= total ? true : undefined), 'all delivered', 900_000);
  const seconds = (Date.now() - started) / 1000;
  return {
    acceptance_seconds: (acceptedAt - started) / 1000,
    accepted_to_all_delivered_seconds: seconds,
    end_to_end_rate: Math.round(total / seconds),
    sent_again_after_device_not_connected: notConnected,
    sent_again_after_a_failed_connection: resentAfterFailedConnection,
  };
}

const phoneOf = (i: number) => `6281${String(40_000_000 + i * 10 + 7)}`;
// Last digits never 0000-0004: those are the sandbox's magic numbers.
const receivers = Array.from({ length: 200 }, (_, i) => `6282${String(20_000_000 + i * 10 + 7)}`);

async function startGateway(store: BenchStore, env: Record<string, string>): Promise<Running> {
  const running = await startProcess(['dist/main.js'], {
    ...store.env,
    PORT: '0',
    LOG_LEVEL: 'info', // startProcess waits for the "Server listening" line, logged at info
    GATEWAY_SEND_INTERVAL_MS: '0',
    // Node.js flags for the gateway alone (e.g. --heapsnapshot-near-heap-limit=1), not for the stand-in or this script.
    ...(process.env.BENCH_GATEWAY_NODE_OPTIONS === undefined
      ? {}
      : { NODE_OPTIONS: process.env.BENCH_GATEWAY_NODE_OPTIONS }),
    ...env,
  });
  const started = Date.now();
  // The last lines it logged, printed if it exits: a crash says why there.
  const last: string[] = [];
  // BENCH_GATEWAY_LOG=<prefix>: each gateway's whole log also goes to <prefix>-<pid>.log, to read after a run.
  const logFile =
    process.env.BENCH_GATEWAY_LOG === undefined
      ? null
      : createWriteStream(`${process.env.BENCH_GATEWAY_LOG}-${running.child.pid}.log`);
  running.child.stdout?.on('data', (chunk: Buffer) => {
    logFile?.write(chunk);
    last.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((line) => line !== ''),
    );
    last.splice(0, Math.max(0, last.length - 30));
  });
  running.child.once('exit', (code, signal) => {
    console.error(`gateway ${running.child.pid} exited (${code ?? signal}) after ${Date.now() - started} ms`);
    if (signal === null && code !== 0) console.error(last.join('\n'));
  });
  return running;
}

const loadAtStart = loadAverage();
const standin = await startStandinProcess({ verbose: false });
const stores: BenchStore[] = [];
const running: Running[] = [];
try {
  // The WhatsApp connector against the stand-in.
  const store = await openBenchStore('sqlite');
  stores.push(store);
  store.cli('migrate', '--create');
  const whatsappEnv = {
    GATEWAY_NETWORK: 'whatsapp',
    GATEWAY_NETWORK_KEY: Buffer.alloc(32, 0x42).toString('base64'),
    GATEWAY_WHATSAPP_URL: standin.ws,
    GATEWAY_WHATSAPP_ROOT_KEY: standin.root_key,
    NODE_EXTRA_CA_CERTS: standin.ca,
  };
  let gateway = await startGateway(store, whatsappEnv);
  running.push(gateway);
  // The default account exists once the gateway started with its bootstrap token; raise its device limit then.
  store.cli('accounts', 'set-limit', 'default', String(devices));
  const rssEmpty = await rssKb(gateway.child.pid!);
  const phones = Array.from({ length: devices }, (_, i) => phoneOf(i));
  const pairingStarted = Date.now();
  let paired = 0;
  await pool(phones, 10, async (phone) => {
    const id = (await api(gateway.url, 'POST', '/devices', { package: 'STARTUP240K', name: `bench ${phone}` })).data.id;
    const qr = await until(async () => {
      const res = await fetch(`${gateway.url}/devices/${id}/qr?response_type=url`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const body = (await res.json()) as any;
      return res.status === 200 && typeof body.data?.qr === 'string' ? (body.data.qr as string) : undefined;
    }, `a QR for ${phone}`);
    const scan = await standin.call('POST', '/control/scan', { qr: qrText(qr), phone });
    if (scan.status !== 200) throw new Error(`scan: ${JSON.stringify(scan.body)}`);
    await until(
      async () => ((await api(gateway.url, 'GET', `/devices/${id}`)).data.connected ? true : undefined),
      `${phone} connected`,
    );
    paired += 1;
    // A line every 50 devices: how the gateway's memory grows while pairing, and the host's load meanwhile.
    if (paired % 50 === 0) {
      const rss = await rssKb(gateway.child.pid!).catch(() => 0);
      const seconds = ((Date.now() - pairingStarted) / 1000).toFixed(0);
      console.error(
        `paired ${paired} in ${seconds} s: gateway RSS ${Math.round(rss / 1024)} MB, load ${loadAverage()[0]}`,
      );
    }
  });
  const pairingSeconds = (Date.now() - pairingStarted) / 1000;
  const rssPaired = await rssKb(gateway.child.pid!);

  // Restart: a fresh process resumes every session from the store.
  await gateway.stop();
  const restartStarted = Date.now();
  gateway = await startGateway(store, whatsappEnv);
  running.push(gateway);
  const listeningSeconds = (Date.now() - restartStarted) / 1000;
  await until(
    async () => ((await standin.call('GET', '/control/stats')).body.streams_open >= devices ? true : undefined),
    'every device connected again',
  );
  const connectSeconds = (Date.now() - restartStarted) / 1000;
  await sleep(5_000); // let the logins' pre-key checks and first writes settle before measuring
  const rssConnected = await rssKb(gateway.child.pid!);
  const cpuBefore = cpuMs(gateway.child.pid!);
  const whatsapp = await endToEnd(gateway.url, store, phones, receivers);
  const whatsappCpu = cpuMs(gateway.child.pid!) - cpuBefore;
  await gateway.stop();

  // The sandbox with the same devices and messages, in its own store.
  const sandboxStore = await openBenchStore('sqlite');
  stores.push(sandboxStore);
  sandboxStore.cli('migrate', '--create');
  const sandbox = await startGateway(sandboxStore, {});
  running.push(sandbox);
  sandboxStore.cli('accounts', 'set-limit', 'default', String(devices));
  await pool(phones, 20, async (phone) => {
    await pairDevice(sandbox.url, phone);
  });
  const sandboxCpuBefore = cpuMs(sandbox.child.pid!);
  const sandboxRun = await endToEnd(sandbox.url, sandboxStore, phones, receivers);
  const sandboxCpu = cpuMs(sandbox.child.pid!) - sandboxCpuBefore;
  await sandbox.stop();

  console.log(
    JSON.stringify(
      {
        benchmark: 'WhatsApp connector against the stand-in',
        machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GB`,
        load_average: { start: loadAtStart, end: loadAverage() },
        devices,
        messages: total,
        concurrency,
        pairing_seconds: pairingSeconds,
        rss_kb: { empty: rssEmpty, paired: rssPaired, after_restart_connected: rssConnected },
        rss_kb_per_connection: {
          while_pairing: Math.round((rssPaired - rssEmpty) / devices),
          after_restart: Math.round((rssConnected - rssEmpty) / devices),
        },
        restart: {
          listening_seconds: listeningSeconds,
          all_connected_seconds: connectSeconds,
          connects_per_second: Math.round(devices / connectSeconds),
        },
        whatsapp: { ...whatsapp, cpu_ms_per_message: Number((whatsappCpu / total).toFixed(2)) },
        sandbox: { ...sandboxRun, cpu_ms_per_message: Number((sandboxCpu / total).toFixed(2)) },
      },
      null,
      2,
    ),
  );
} finally {
  for (const r of running) await r.stop();
  await standin.stop();
  for (const s of stores) await s.close();
}

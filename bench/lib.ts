// Shared pieces of the benchmarks: start the gateway as its own process (the
// built `dist/main.js`, as `npm start` runs it), wait for it, pair devices.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TOKEN = 'mgw_bench_token_000000000000000000000000';

export interface Running {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a node script as a child and resolves once it logs "Server listening at <url>" (or prints {"url":...}). */
export async function startProcess(args: string[], env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start`)), 30_000);
    lines.on('line', (line) => {
      const match =
        /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line) ?? /"url":"((?:http|ws)[^"]+)"/.exec(line);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  // Keep draining the log; BENCH_GATEWAY_LOG names a file that gets a copy of every line (to read after a run).
  const copy = process.env.BENCH_GATEWAY_LOG;
  lines.on('line', copy === undefined ? () => undefined : (line) => appendFileSync(copy, `${line}\n`));
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * One gateway process on a fresh SQLite data directory. BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof")
 * goes to node; BENCH_GATEWAY names another entry script than `dist/main.js` (an older build to compare).
 */
export async function startGateway(env: Record<string, string> = {}): Promise<Running> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-'));
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return startProcess([...nodeArgs, process.env.BENCH_GATEWAY ?? 'dist/main.js'], {
    PORT: '0',
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_BOOTSTRAP_TOKEN: TOKEN,
    LOG_LEVEL: 'info',
    ...env,
  });
}

export async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...headers,
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Creates and pairs a device through the sandbox; resolves with its phone once it is connected. */
export async function pairDevice(base: string, phone: string, plan = 'STARTUP240K'): Promise<number> {
  const id = (await api(base, 'POST', '/devices', { package: plan, name: `bench ${phone}` })).data.id as number;
  const qr = (await api(base, 'GET', `/sandbox/devices/${id}/qr`)).data.qr as string;
  await api(base, 'POST', '/sandbox/scan', { qr, phone });
  for (let i = 0; i < 500; i++) {
    const device = (await api(base, 'GET', `/devices/${id}`)).data;
    if (device.connected) return id;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`device ${id} did not connect`);
}

export function machine(): string {
  return `${process.platform} ${process.arch}, node ${process.version}`;
}

/** CPU time (user + system) a process has used so far, in ms, from /proc. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export interface LoadResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly total: number;
  /** Cores the server used on average during the measured run (1 = one core busy). */
  readonly server_cpu: number;
  /** Cores the load generator (this process) used. */
  readonly loadgen_cpu: number;
}

/**
 * Autocannon on 50 connections against `server` for `seconds` after a warm-up
 * (2 s unless told), measuring throughput, latency, and the CPU that the server and the
 * load generator used while it ran.
 */
export async function cpuLoad(
  server: Running,
  path: string,
  method: 'GET' | 'POST',
  body: string | undefined,
  seconds: number,
  withToken: boolean,
  connections = 50,
  warmUpSeconds = 2,
): Promise<LoadResult> {
  const options = {
    url: `${server.url}${path}`,
    method,
    connections,
    headers: {
      ...(withToken ? { authorization: `Bearer ${TOKEN}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body }),
  };
  if (warmUpSeconds > 0) await autocannon({ ...options, duration: warmUpSeconds });
  const pid = server.child.pid!;
  const serverBefore = cpuMs(pid);
  const selfBefore = process.cpuUsage();
  const started = Date.now();
  const result = await autocannon({ ...options, duration: seconds });
  const wall = Date.now() - started;
  const self = process.cpuUsage(selfBefore);
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
    server_cpu: Number(((cpuMs(pid) - serverBefore) / wall).toFixed(2)),
    loadgen_cpu: Number(((self.user + self.system) / 1000 / wall).toFixed(2)),
  };
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * A local media server for the media benchmarks: `GET /<megabytes>.pdf` answers that many MiB of a PDF-looking
 * body with its Content-Length, streamed a MiB at a time (never held whole). Answers its base URL and the server.
 */
export async function startPdfMediaServer(): Promise<{ base: string; server: Server }> {
  const MiB = 1024 * 1024;
  const head = Buffer.alloc(MiB, 0x2e);
  head.write('%PDF-1.7\n', 0, 'latin1');
  const filler = Buffer.alloc(MiB, 0x2e);
  const server = createServer((req, res) => {
    const size = Number(/^\/(\d+)\.pdf$/.exec(req.url ?? '')?.[1] ?? 0) * MiB;
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(size) });
    let sent = 0;
    const pump = (): void => {
      while (sent < size) {
        const chunk = (sent === 0 ? head : filler).subarray(0, Math.min(MiB, size - sent));
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The answer to one posted body: its status (0: the connection closed first) and the time to it. */
export interface BodyAnswer {
  readonly status: number;
  readonly ms: number;
}

/** Posts `body` to POST /messages over node:http and resolves with the status and the time to the answer. */
export function postBody(base: string, body: Buffer, type = 'application/json'): Promise<BodyAnswer> {
  return new Promise((resolve) => {
    const started = performance.now();
    let settled = false;
    const settle = (status: number) => {
      if (settled) return;
      settled = true;
      resolve({ status, ms: performance.now() - started });
    };
    const req = request(
      `${base}/messages`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type, 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => settle(res.statusCode ?? 0));
      },
    );
    // Over the body limit the gateway answers 413 and closes the connection while the client is
    // still writing: the client may see the reset (EPIPE) before it reads the answer. Counted as
    // status 0, "closed", with its time.
    req.on('error', () => settle(0));
    req.end(body);
  });
}

/** One /healthz request on a new connection (no keep-alive reuse racing the server's idle timeout). */
export function healthz(base: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/healthz`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The value below which `p` percent of `values` fall (NaN for none). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export interface BodyRun {
  readonly answers: BodyAnswer[];
  /** The distinct statuses, in the order first seen. */
  readonly statuses: number[];
  /** /healthz latency (ms) of each probe that got an answer. */
  readonly health: number[];
  /** Probes that failed or answered other than 200. */
  readonly probeErrors: number;
}

/**
 * `parallel` clients post the same body to POST /messages, `rounds` times each, while a probe
 * requests /healthz in a loop: the answers and the probe's latencies.
 */
export async function postWhileProbing(
  base: string,
  body: Buffer,
  type: string,
  parallel: number,
  rounds: number,
): Promise<BodyRun> {
  let running = true;
  const health: number[] = [];
  let probeErrors = 0;
  const probe = (async () => {
    while (running) {
      const started = performance.now();
      try {
        if ((await healthz(base)) !== 200) probeErrors++;
        health.push(performance.now() - started);
      } catch {
        probeErrors++;
      }
    }
  })();
  const answers: BodyAnswer[] = [];
  for (let round = 0; round < rounds; round++) {
    answers.push(...(await Promise.all(Array.from({ length: parallel }, () => postBody(base, body, type)))));
  }
  running = false;
  await probe;
  return { answers, statuses: [...new Set(answers.map((a) => a.status))], health, probeErrors };
}

/**
 * An autocannon request that POSTs to /messages with the bench token, the body made afresh for each request from its
 * number (0, 1, 2, ...): the load of the benchmarks that send real traffic.
 */
export function messagesRequest(bodyOf: (i: number) => Record<string, unknown>): autocannon.Request {
  let n = 0;
  return {
    method: 'POST',
    path: '/messages',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    setupRequest: (request) => {
      request.body = JSON.stringify(bodyOf(n++));
      return request;
    },
  };
}

/**
 * Chat bodies that walk the devices and recipients in turn, one count shared by every request object built from it
 * (several load runs, or one per node), so no two bodies repeat: `messagesRequest(chatRotation(...))`.
 */
export function chatRotation(
  phones: readonly string[],
  recipients: readonly string[],
  label: string,
): () => Record<string, unknown> {
  let n = 0;
  return () => {
    const i = n++;
    return {
      device: phones[i % phones.length],
      receiver: recipients[i % recipients.length],
      type: 'chat',
      params: { text: `${label} ${i}` },
    };
  };
}

/**
 * `count` sandbox devices paired ten at a time (phones `6285…` from `phoneBase`, ten apart), each with its
 * webhook_url on `hookUrl`: their phones, ids and webhook secrets, in pairing order.
 */
export async function pairHookedDevices(base: string, count: number, phoneBase: number, hookUrl: string) {
  const phones: string[] = [];
  const ids: number[] = [];
  const secrets = new Map<number, string>();
  for (let i = 0; i < count; i += 10) {
    const batch = Array.from(
      { length: Math.min(10, count - i) },
      (_, j) => `6285${String(phoneBase + (i + j) * 10 + 7)}`,
    );
    const paired = await Promise.all(batch.map((phone) => pairDevice(base, phone)));
    for (const id of paired) {
      const device = (await api(base, 'PATCH', `/devices/${id}`, { webhook_url: hookUrl })).data;
      secrets.set(id, device.webhook_secret as string);
    }
    ids.push(...paired);
    phones.push(...batch);
  }
  return { phones, ids, secrets };
}

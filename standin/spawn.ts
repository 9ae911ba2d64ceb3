/**
 * The stand-in as its own process (the entry `npm run standin` runs, bundled by bundle.ts), for tests and
 * benchmarks, with a client for its control interface.
 *
 * Owns: starting it, reading its first line (the addresses and keys), stopping it.
 * Must never: be imported by the gateway (src/).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { bundledStandin } from './bundle.js';

export interface StartOptions {
  readonly timeoutMs?: number;
  /** Log lines on standard error (`--verbose`). */
  readonly verbose?: boolean;
}

export interface StandinProcess {
  readonly ws: string;
  readonly control: string;
  readonly root_key: string;
  readonly ca: string;
  readonly child: ChildProcess;
  output(): string;
  /** A control call: the answer's status and JSON body (read loosely by default, as tests read answers). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  call<T = any>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}

export async function startStandinProcess({
  timeoutMs = 30_000,
  verbose = true,
}: StartOptions = {}): Promise<StandinProcess> {
  const main = await bundledStandin();
  const child = spawn(process.execPath, [main, '--port', '0', ...(verbose ? ['--verbose'] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const first = await new Promise<{ ws: string; control: string; root_key: string; ca: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the stand-in did not start in time:\n${err}`)), timeoutMs);
    child.stdout.on('data', (c: string) => {
      out += c;
      const newline = out.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      resolve(JSON.parse(out.slice(0, newline)));
    });
    void exited.then(() => reject(new Error(`the stand-in exited:\n${err}`)));
  });
  return {
    ...first,
    child,
    output: () => err,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async call<T = any>(method: 'GET' | 'POST', path: string, body?: unknown) {
      const res = await fetch(`${first.control}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as T };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

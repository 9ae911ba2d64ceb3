// Runs the gateway the way an operator does, as its own process (the build, as `npm start` runs it), on a test
// store, and talks to it over real HTTP. For tests that must kill the process (crash safety) rather than close an app.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { request, type Agent } from 'undici';
import { BUILT_MAIN, ensureBuilt } from './built.js';
import { TEST_TOKEN, type StoreLocation } from './gateway.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface GatewayProcess {
  readonly port: number;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGKILL: no shutdown code runs. Resolves when the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM, the clean shutdown. Resolves when the process is gone. */
  stop(): Promise<void>;
}

export interface HttpAnswer<T = any> {
  status: number;
  body: T;
}

/**
 * Starts the build, `node dist/main.js` (made current by ensureBuilt in built.ts: a file calls it in a `beforeAll`
 * with BUILD_TIMEOUT_MS, since a build takes longer than a test may), on the store with the test token; resolves once
 * it listens. With `built: false`, `node --import tsx src/main.ts` instead, for a test about running the sources:
 * tsx costs about 3 s of CPU a start (docs/testing.md, Where the suite's time goes).
 */
export async function startGatewayProcess(
  location: StoreLocation,
  env: Record<string, string> = {},
  { timeoutMs = 45_000, built = true } = {},
): Promise<GatewayProcess> {
  // A no-op once the file's beforeAll made the build current.
  if (built) ensureBuilt();
  const settings: NodeJS.ProcessEnv = {};
  // Only the parent's basics; no setting of the gateway leaks in from the test runner.
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'SYSTEMROOT']) {
    if (process.env[name] !== undefined) settings[name] = process.env[name];
  }
  Object.assign(settings, {
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    GATEWAY_DATA_DIR: location.dataDir,
    GATEWAY_BOOTSTRAP_TOKEN: TEST_TOKEN,
    GATEWAY_SERVER_NAME: 'test-node',
    ...(location.databaseUrl === null ? {} : { DATABASE_URL: location.databaseUrl }),
    ...env,
  });
  // The data directory as working directory: no stray .env file is read.
  const child = spawn(process.execPath, built ? [BUILT_MAIN] : ['--import', TSX, MAIN], {
    cwd: location.dataDir,
    env: settings,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('close', () => resolve());
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`gateway did not listen within ${timeoutMs} ms:\n${output}`)),
        timeoutMs,
      );
      child.stdout.on('data', (chunk: string) => {
        output += chunk;
        const match = /"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/.exec(output);
        if (match !== null) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`gateway exited before listening:\n${output}`));
      });
    });
    return { port, child, output: () => output, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
  } catch (error) {
    await end('SIGKILL');
    throw error;
  }
}

/** A small HTTP client for one gateway process, with the test token. */
export function httpClient(port: number, agent: Agent) {
  return async <T = any>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${TEST_TOKEN}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await request(`http://127.0.0.1:${port}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: agent,
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.statusCode, body: parsed as T } satisfies HttpAnswer<T>;
  };
}

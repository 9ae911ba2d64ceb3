// docs/internals.md, Accounts and tokens; Running and operating: the real entry point as an operator runs it. JSON log
// lines with a request id, the bootstrap token printed exactly once (and no
// other secret ever logged), clean exit on SIGTERM, and a clear message and
// exit code 1 for a bad setting. The built gateway (`npm start` runs dist/main.js), made current first.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, BUILT_MAIN, ensureBuilt } from '../helpers/built.js';
import { newStoreLocation, noStoreAvailable, type StoreLocation } from '../helpers/gateway.js';
const WAIT_MS = 45_000;

interface Gateway {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the listening port (from the "Server listening at" log line). */
  port: Promise<number>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);

function settingsFor(location: StoreLocation, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Only the parent's basics; no setting of the gateway leaks in from the test runner.
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'SYSTEMROOT']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  env.HOST = '127.0.0.1';
  env.PORT = '0';
  env.LOG_LEVEL = 'info';
  env.GATEWAY_DATA_DIR = location.dataDir;
  if (location.databaseUrl !== null) env.DATABASE_URL = location.databaseUrl;
  return { ...env, ...extra };
}

function startProcess(location: StoreLocation, extra: Record<string, string> = {}): Gateway {
  // The data directory as working directory: no stray .env file is read.
  const child = spawn(process.execPath, [BUILT_MAIN], {
    cwd: location.dataDir,
    env: settingsFor(location, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  const port = new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const match = /"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/.exec(stdout);
      if (match !== null) resolve(Number(match[1]));
    });
    void exited.then(() => reject(new Error(`gateway exited before listening:\n${stdout}\n${stderr}`)));
  });
  port.catch(() => undefined);
  return { child, stdout: () => stdout, stderr: () => stderr, port, exited };
}

async function within<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Resolves once the gateway's standard output contains `text`. */
async function waitForOutput(gateway: Gateway, text: string): Promise<void> {
  while (!gateway.stdout().includes(text)) {
    if (gateway.child.exitCode !== null || gateway.child.signalCode !== null) {
      throw new Error(`gateway exited without writing ${text}:\n${gateway.stdout()}\n${gateway.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function stop(gateway: Gateway): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  gateway.child.kill('SIGTERM');
  return within(gateway.exited, 'exit after SIGTERM', 5_000);
}

afterEach(async () => {
  // A failed test must not leave a gateway running.
  const left = [...running];
  for (const child of left) child.kill('SIGKILL');
  await Promise.all(left.map((child) => new Promise((resolve) => child.once('close', resolve))));
});

describe.skipIf(noStoreAvailable)('the gateway process', () => {
  let location: StoreLocation;
  let bootstrapToken = '';
  const agent = new Agent();

  beforeAll(async () => {
    location = await newStoreLocation({ migrated: false });
  });
  afterAll(async () => {
    await agent.close();
    await location?.drop();
  });

  it('logs JSON lines, prints the bootstrap token once and no secret ever, and stops cleanly on SIGTERM', async () => {
    const gateway = startProcess(location);
    const port = await within(gateway.port, 'listening');
    expect(port).toBeGreaterThan(0);

    const call = async (method: 'GET' | 'POST' | 'PATCH', path: string, token: string | null, body?: unknown) => {
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await request(`http://127.0.0.1:${port}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: agent,
      });
      const text = await res.body.text();
      return {
        status: res.statusCode,
        requestId: String(res.headers['x-request-id']),
        body: JSON.parse(text) as any,
        method,
        path,
      };
    };

    // The token is printed once the gateway listens, right after the listening line.
    await within(waitForOutput(gateway, '"api_token"'), 'the bootstrap token');
    const startLines = jsonLines(gateway.stdout());
    const listening = startLines.findIndex((line) => String(line.msg).startsWith('Server listening'));
    expect(startLines.findIndex((line) => 'api_token' in line)).toBeGreaterThan(listening);
    const withToken = startLines.filter((line) => 'api_token' in line);
    expect(withToken).toHaveLength(1);
    const token = String(withToken[0]?.api_token);
    expect(token).toMatch(/^mgw_[A-Za-z0-9_-]{43}$/);
    bootstrapToken = token;

    const calls = [];
    const devices = await call('GET', '/devices', token);
    expect(devices.status).toBe(200);
    calls.push(devices);
    const created = await call('POST', '/devices', token, { package: 'BETA', name: 'desk' });
    expect(created.status).toBe(201);
    calls.push(created);
    const secret = String(created.body.data.webhook_secret);
    expect(secret).toMatch(/^whsec_/);
    const patched = await call('PATCH', `/devices/${created.body.data.id}`, token, {
      webhook_url: 'https://hooks.example.com/in',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.webhook_secret).toBe(secret);
    calls.push(patched);
    const newToken = await call('POST', '/tokens', token, { name: 'second' });
    expect(newToken.status).toBe(201);
    calls.push(newToken);
    const wrongToken = 'mgw_not_a_real_token_but_long_enough_to_look_like_one';
    const refused = await call('GET', '/devices', wrongToken);
    expect(refused.status).toBe(401);
    calls.push(refused);
    calls.push(await call('GET', '/healthz', null));

    // Lines are written in blocks, but a quiet gateway still writes each one within moments, not only at exit.
    const last = calls.at(-1)!.requestId;
    const shownAt = Date.now();
    while (!gateway.stdout().includes(last) && Date.now() - shownAt < 2_000)
      await new Promise((r) => setTimeout(r, 20));
    expect(gateway.stdout()).toContain(last);

    const { code, signal } = await stop(gateway);
    expect({ code, signal }).toEqual({ code: 0, signal: null });

    const output = gateway.stdout();
    const lines = jsonLines(output);
    for (const line of lines) {
      expect(line).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) });
    }
    expect(lines.some((line) => line.msg === 'shutting down' && line.signal === 'SIGTERM')).toBe(true);
    expect(lines.at(-1)?.msg).not.toMatch(/too long|failed/);

    // Secrets: the bootstrap token only on its own line; nothing else, ever.
    const tokenLines = output.split('\n').filter((line) => line.includes(token));
    expect(tokenLines).toHaveLength(1);
    expect(JSON.parse(tokenLines[0] ?? '{}').api_token).toBe(token);
    expect(output.split('\n').filter((line) => line.includes('api_token'))).toHaveLength(1);
    expect(output).not.toContain(secret);
    expect(output).not.toContain('whsec_');
    expect(output).not.toContain(String(newToken.body.data.token));
    expect(output).not.toContain(wrongToken);
    expect(output).not.toContain('Bearer');
    expect(output.toLowerCase()).not.toContain('authorization');
    expect(gateway.stderr()).toBe('');

    // One line per request, carrying its request id, method, URL and status.
    for (const c of calls) {
      expect(c.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
      const forRequest = lines.filter((line) => line.reqId === c.requestId && 'status' in line);
      expect(forRequest).toHaveLength(1);
      expect(forRequest[0]).toMatchObject({ method: c.method, url: c.path, status: c.status });
    }
    expect(new Set(calls.map((c) => c.requestId)).size).toBe(calls.length);
  });

  it('prints no token on a second start on the same store, where the first token still works', async () => {
    const gateway = startProcess(location);
    const port = await within(gateway.port, 'listening');
    expect(bootstrapToken).not.toBe('');
    const devices = await request(`http://127.0.0.1:${port}/devices`, {
      headers: { authorization: `Bearer ${bootstrapToken}` },
      dispatcher: agent,
    });
    const body = (await devices.body.json()) as any;
    expect(devices.statusCode).toBe(200);
    expect(body.data.map((d: { name: string }) => d.name)).toEqual(['desk']);
    // The bundled build finds the files of its package (scripts/bundle.js moves modules into dist/chunks/): the
    // version from package.json, and the dashboard from dist/dashboard/.
    const info = await request(`http://127.0.0.1:${port}/gateway`, {
      headers: { authorization: `Bearer ${bootstrapToken}` },
      dispatcher: agent,
    });
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(((await info.body.json()) as any).data.version).toBe(version);
    const dashboard = await request(`http://127.0.0.1:${port}/dashboard/`, { dispatcher: agent });
    expect(dashboard.statusCode).toBe(200);
    expect(await dashboard.body.text()).toContain('<div id="app">');
    expect(await stop(gateway)).toEqual({ code: 0, signal: null });
    const output = gateway.stdout();
    expect(output).not.toContain('api_token');
    expect(output).not.toMatch(/mgw_[A-Za-z0-9_-]{20,}/);
    expect(jsonLines(output).some((line) => line.msg === 'shutting down')).toBe(true);
  });

  it('a first start that cannot listen prints no token and uses none up: the next start prints one', async () => {
    const fresh = await newStoreLocation({ migrated: false });
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as AddressInfo).port);
      const failed = startProcess(fresh, { PORT: port });
      expect(await within(failed.exited, 'exit when the port is taken')).toEqual({ code: 1, signal: null });
      expect(failed.stdout()).toContain('could not listen');
      expect(failed.stdout()).not.toContain('api_token');
      expect(failed.stdout()).not.toMatch(/mgw_[A-Za-z0-9_-]{20,}/);

      const next = startProcess(fresh);
      await within(next.port, 'listening');
      await within(waitForOutput(next, '"api_token"'), 'the bootstrap token on the next start');
      const printed = jsonLines(next.stdout()).filter((line) => 'api_token' in line);
      expect(printed).toHaveLength(1);
      const res = await request(`http://127.0.0.1:${await next.port}/devices`, {
        headers: { authorization: `Bearer ${String(printed[0]?.api_token)}` },
        dispatcher: agent,
      });
      await res.body.text();
      expect(res.statusCode).toBe(200);
      expect(await stop(next)).toEqual({ code: 0, signal: null });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      await fresh.drop();
    }
  });

  it('a bad setting exits with code 1 and a message naming it on stderr', async () => {
    const gateway = startProcess(location, { PORT: 'abc' });
    expect(await within(gateway.exited, 'exit')).toEqual({ code: 1, signal: null });
    expect(gateway.stderr()).toContain('Configuration error: PORT must be a whole number, got "abc"');
    expect(gateway.stdout()).toBe('');
  });

  it('GATEWAY_NETWORK=whatsapp without GATEWAY_NETWORK_KEY stops before anything is stored or printed', async () => {
    const fresh = await newStoreLocation({ migrated: false });
    try {
      const gateway = startProcess(fresh, { GATEWAY_NETWORK: 'whatsapp' });
      expect(await within(gateway.exited, 'exit')).toEqual({ code: 1, signal: null });
      const lines = gateway.stderr().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^Configuration error: GATEWAY_NETWORK_KEY is required with GATEWAY_NETWORK=whatsapp/);
      // No bootstrap token was made: the store was never opened.
      expect(gateway.stdout()).toBe('');
      expect(readdirSync(fresh.dataDir)).toEqual([]);
    } finally {
      await fresh.drop();
    }
  });

  it('a malformed GATEWAY_NETWORK_KEY is refused without repeating it', async () => {
    const gateway = startProcess(location, { GATEWAY_NETWORK: 'whatsapp', GATEWAY_NETWORK_KEY: 'c2hvcnQta2V5' });
    expect(await within(gateway.exited, 'exit')).toEqual({ code: 1, signal: null });
    expect(gateway.stderr()).toMatch(/^Configuration error: GATEWAY_NETWORK_KEY must be 32 random bytes in base64/m);
    expect(gateway.stderr()).not.toContain('c2hvcnQta2V5');
  });

  it('a bad LOG_LEVEL is refused the same way', async () => {
    const gateway = startProcess(location, { LOG_LEVEL: 'loud' });
    expect(await within(gateway.exited, 'exit')).toEqual({ code: 1, signal: null });
    expect(gateway.stderr()).toMatch(/^Configuration error: LOG_LEVEL /m);
  });
});

// Starts one scenario of test/standin/scenarios.ts in its own process and returns what it observed.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makeTlsIdentity, type TlsIdentity } from '../../standin/certs.js';

const RUNNER = fileURLToPath(new URL('./run-scenario.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

let tls: TlsIdentity | undefined;

export async function runScenario<T = any>(name: string): Promise<T> {
  tls ??= makeTlsIdentity();
  const child = spawn(process.execPath, ['--import', TSX, RUNNER, name], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.caPath, STANDIN_TLS_CA: tls.caPath },
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  if (code !== 0 || line === undefined) throw new Error(`scenario ${name} failed (exit ${code}):\n${err}${out}`);
  return JSON.parse(line.slice('RESULT '.length)) as T;
}

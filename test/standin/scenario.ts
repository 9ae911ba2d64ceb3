// Runs scenarios of test/standin/scenarios.ts in a process of their own (run-scenario.ts) and returns what each
// observed. One process serves a test file's scenarios, one at a time; the file stops it in `afterAll` with
// stopScenarios (the leak check fails a file that leaves it running), which also removes its certificate's folder.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makeTlsIdentity, removeTlsIdentity, type TlsIdentity } from '../../standin/certs.js';

const RUNNER = fileURLToPath(new URL('./run-scenario.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

interface Runner {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  /** Answer lines not yet taken, and the takers waiting for one. */
  readonly lines: string[];
  readonly waiting: Array<(line: string | null) => void>;
  stderr: string;
}

let tls: TlsIdentity | undefined;
let runner: Runner | undefined;

function start(): Runner {
  tls ??= makeTlsIdentity();
  const child = spawn(process.execPath, ['--import', TSX, RUNNER], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.caPath, STANDIN_TLS_CA: tls.caPath },
  });
  const started: Runner = {
    child,
    exited: new Promise((resolve) => child.once('close', resolve)),
    lines: [],
    waiting: [],
    stderr: '',
  };
  child.stderr.setEncoding('utf8').on('data', (c: string) => (started.stderr += c));
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.startsWith('RESULT ') && !line.startsWith('FAILED ')) return;
    const taker = started.waiting.shift();
    if (taker === undefined) started.lines.push(line);
    else taker(line);
  });
  void started.exited.then(() => {
    if (runner === started) runner = undefined;
    for (const taker of started.waiting.splice(0)) taker(null);
  });
  return started;
}

export async function runScenario<T = any>(name: string): Promise<T> {
  runner ??= start();
  const current = runner;
  const from = current.stderr.length;
  const answer = new Promise<string | null>((resolve) => {
    const ready = current.lines.shift();
    if (ready === undefined) current.waiting.push(resolve);
    else resolve(ready);
  });
  current.child.stdin.write(`${name}\n`);
  const line = await answer;
  if (line === null) {
    const code = await current.exited;
    throw new Error(`scenario ${name} failed (the process exited with ${code}):\n${current.stderr.slice(from)}`);
  }
  if (line.startsWith('FAILED ')) {
    const why = JSON.parse(line.slice('FAILED '.length)) as string;
    throw new Error(`scenario ${name} failed: ${why}\n${current.stderr.slice(from)}`);
  }
  return JSON.parse(line.slice('RESULT '.length)) as T;
}

/**
 * Ends the scenarios' process (it exits once its stdin ends) and removes the folder of the certificate it trusted;
 * resolves when both are gone. The next scenario makes a new process and a new certificate.
 */
export async function stopScenarios(): Promise<void> {
  const current = runner;
  runner = undefined;
  if (current !== undefined) {
    current.child.stdin.end();
    await current.exited;
  }
  const made = tls;
  tls = undefined;
  if (made !== undefined) await removeTlsIdentity(made);
}

// Runs the sandbox network as its own process, the way an operator would:
// `gateway sandbox serve`, started through the built CLI entry (`npm run cli`; a file calls ensureBuilt from built.ts
// in a `beforeAll` with BUILD_TIMEOUT_MS first).
//
// The process is ready when it prints its JSON line with `url` on stdout. Loading the CLI takes under a second on an
// idle machine and more than 20 s with several of them starting at a load average of 17, so no fixed start-up limit
// of its own is right: it waits for as long as the running test may run (its own
// timeout, which then fails the test as any slow step would). A start that fails (the process exits, or the test
// ends first) says why with what the process wrote on stderr, and never leaves the process running.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { onTestFinished } from 'vitest';
import { getCurrentTest } from 'vitest/suite';
import { BUILT_CLI, ensureBuilt } from './built.js';

export interface SandboxProcess {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Outside a test (a hook), the suites' hook timeout (vitest.config.ts) bounds the start instead. */
const HOOK_TIMEOUT_MS = 60_000;
/** How much of the child's stderr a failed start shows (its end: where the reason is). */
const STDERR_KEPT = 8_000;

export async function startSandboxProcess(args: string[] = []): Promise<SandboxProcess> {
  // A no-op once the file's beforeAll made the build current.
  ensureBuilt();
  const child: ChildProcess = spawn(process.execPath, [BUILT_CLI, 'sandbox', 'serve', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    // Passed on as before (a running sandbox's warnings belong in the test output), and kept for a failed start.
    process.stderr.write(chunk);
    stderr = (stderr + chunk).slice(-STDERR_KEPT);
  });
  const lines = createInterface({ input: child.stdout! });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    lines.close();
  };
  const failure = (why: string) =>
    new Error(`sandbox process did not start: ${why}\n--- its stderr ---\n${stderr.trim() || '(nothing)'}`);

  const test = getCurrentTest();
  let ready = false;
  // The test ending (passed, failed or timed out) while the process still starts must not leave it running.
  if (test !== undefined) onTestFinished(() => (ready ? undefined : kill()));
  const limitMs = test?.timeout ?? HOOK_TIMEOUT_MS;
  const startedAt = Date.now();

  const url = await new Promise<string>((resolve, reject) => {
    // Only a guard for a start outside any test's time limit; inside a test, its own timeout fires first.
    const timer = setTimeout(
      () => void kill().then(() => reject(failure(`no readiness line within ${limitMs} ms`))),
      limitMs,
    );
    timer.unref();
    lines.on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as { url?: string };
        if (parsed.url !== undefined) {
          clearTimeout(timer);
          ready = true;
          resolve(parsed.url);
        }
      } catch {
        // not a JSON line
      }
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(failure(err.message));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(failure(`it exited (${signal ?? `code ${code}`}) after ${Date.now() - startedAt} ms`));
    });
  });
  return {
    url,
    port: Number(new URL(url).port),
    stop: kill,
  };
}

// Fails a test file that leaves a server, socket, timer or child process
// running after its last test, or the process's environment variables changed:
// every test cleans up what it starts. Where files share a process (the `unit`
// project), it also puts back what vitest itself lends a file (fake timers,
// spies, stubbed variables and globals), so no file runs under an earlier one's.
import { afterAll, beforeAll, vi } from 'vitest';

const WATCHED = new Set(['TCPServerWrap', 'TCPSocketWrap', 'Timeout', 'ProcessWrap', 'PipeWrap']);

function snapshot(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (WATCHED.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

let before = new Map<string, number>();
let environment: Record<string, string | undefined> = {};

beforeAll(() => {
  before = snapshot();
  environment = { ...process.env };
});

/** The names of the variables whose value differs from `earlier` (set, changed or removed). */
function changedVariables(earlier: Record<string, string | undefined>): string[] {
  const names = new Set([...Object.keys(earlier), ...Object.keys(process.env)]);
  return [...names].filter((name) => earlier[name] !== process.env[name]).sort();
}

afterAll(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  const changed = changedVariables(environment);
  if (changed.length > 0) {
    throw new Error(`test file left environment variables changed: ${changed.join(', ')} (use vi.stubEnv)`);
  }
});

afterAll(async () => {
  // Closing is often finished one turn of the event loop later.
  for (let i = 0; i < 50; i++) {
    const leaked = [...snapshot()].filter(([kind, count]) => count > (before.get(kind) ?? 0));
    if (leaked.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const leaked = [...snapshot()].filter(([kind, count]) => count > (before.get(kind) ?? 0));
  if (leaked.length > 0) {
    throw new Error(
      `test file left resources running: ${leaked.map(([k, n]) => `${k}×${n - (before.get(k) ?? 0)}`).join(', ')}`,
    );
  }
});

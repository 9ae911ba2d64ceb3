// Fails a test file that leaves a server, socket, timer or child process
// running after its last test: every test cleans up what it starts.
import { afterAll, beforeAll } from 'vitest';

const WATCHED = new Set(['TCPServerWrap', 'TCPSocketWrap', 'Timeout', 'ProcessWrap', 'PipeWrap']);

function snapshot(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (WATCHED.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

let before = new Map<string, number>();

beforeAll(() => {
  before = snapshot();
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

// test/helpers/sandbox-process.ts, the way several test files start the sandbox network as its own process: a start
// that fails says why with the process's own stderr (it used to say only "exited with 1", or "did not start" after a
// fixed 15 s that a loaded machine exceeds), and a start that works gives a reachable address and stops cleanly.
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/built.js';
import { startSandboxProcess } from '../helpers/sandbox-process.js';

describe('starting the sandbox as its own process (test helper)', () => {
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  it('a failed start reports the process’s stderr', async () => {
    const started = startSandboxProcess(['--qr-rotate-ms', 'soon']);
    await expect(started).rejects.toThrow(
      /sandbox process did not start: it exited \(code \d+\)[\s\S]*--- its stderr ---/,
    );
    const message = await started.then(
      () => '',
      (err: Error) => err.message,
    );
    expect(message.split('--- its stderr ---')[1]).toContain('soon');
  });

  it('a good start answers on its address and stops', async () => {
    const sandbox = await startSandboxProcess();
    expect(sandbox.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const socket = new WebSocket(sandbox.url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.close();
    await new Promise((resolve) => socket.once('close', resolve));
    await sandbox.stop();
  });
});

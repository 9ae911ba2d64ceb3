// Runs the sandbox network as its own process, the way an operator would:
// `gateway sandbox serve`, started through the CLI entry.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface SandboxProcess {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

export async function startSandboxProcess(args: string[] = []): Promise<SandboxProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'sandbox', 'serve', '--port', '0', ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('sandbox process did not start')), 15_000);
    lines.on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as { url?: string };
        if (parsed.url !== undefined) {
          clearTimeout(timer);
          resolve(parsed.url);
        }
      } catch {
        // not a JSON line
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox process exited with ${code}`));
    });
  });
  return {
    url,
    port: Number(new URL(url).port),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => {
          lines.close();
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

// The build in dist/, made current first: the same check `npm start` makes (scripts/run-built.js), so a test of
// the built gateway never runs stale code. A no-op when the build is current (as after `npm ci` or `npm run build`).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function ensureBuilt(): void {
  const result = spawnSync(process.execPath, ['scripts/run-built.js', '--prepare'], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`the build failed:\n${result.stdout}${result.stderr}`);
}

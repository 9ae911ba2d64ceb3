// Builds the dashboard from web/ once per run, into a temporary directory the
// browser tests serve, so they always test the current source (never a stale
// dist/), and removes it afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    dashboardDir: string;
  }
}

export default async function setup(project: TestProject) {
  const outDir = await mkdtemp(join(tmpdir(), 'gw-dashboard-build-'));
  await build({
    configFile: fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url)),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
  project.provide('dashboardDir', outDir);
  return async () => {
    await rm(outDir, { recursive: true, force: true });
  };
}

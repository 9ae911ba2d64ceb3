/**
 * The stand-in bundled into one file for its own process (esbuild; packages stay in node_modules/), so a start
 * does not pay for tsx compiling and resolving the stand-in's modules one by one: about 0.8 s of CPU against 1.7 s,
 * and the end-to-end tests start it some twenty times a run.
 *
 * Owns: node_modules/.cache/gateway-standin/, where each bundle is kept under the hash of its content (test
 * processes that bundle at the same time write the same file, each through a rename). Must never: be imported by
 * the gateway (src/).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
/** Inside the project, so that the bundle's package imports find its node_modules/. */
const CACHE = fileURLToPath(new URL('../node_modules/.cache/gateway-standin/', import.meta.url));

let bundled: Promise<string> | undefined;

/** The path of the stand-in's entry point as one bundled file, made at most once a process. */
export function bundledStandin(): Promise<string> {
  bundled ??= bundle();
  return bundled;
}

async function bundle(): Promise<string> {
  const result = await build({
    entryPoints: [MAIN],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'warning',
  });
  const code = result.outputFiles[0]!.contents;
  const file = join(CACHE, `main-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(CACHE, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, code);
    renameSync(partial, file);
  }
  return file;
}

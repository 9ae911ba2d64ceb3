/**
 * The gateway's own package directory (the one holding its package.json), found from wherever the running code is:
 * src/ (tsx, tests), or dist/ and dist/chunks/ (the build; scripts/bundle.js moves modules into chunks, so a path
 * counted in levels from a module's own file would be wrong there).
 *
 * Owns: that one lookup, made once. Never reads the package.json itself.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return dirname(start);
  }
}

/** Absolute path of the gateway's package directory. */
export const packageRoot = findPackageRoot();

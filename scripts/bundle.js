// Runs in `npm run build`, after tsc: writes the gateway's two entry points, dist/main.js (the server) and
// dist/cli/main.js (the operator's CLI), as bundles of the gateway's own modules and of the ES-module packages they
// import, with the code both share in dist/chunks/. tsc's one-file-per-module output stays beside them (the type
// check and its source maps), but the entry points no longer load it.
//
// Why: a start loaded some 870 ES modules (the gateway's 320, Kysely's 260, TypeBox's 200), and resolving, reading
// and linking them one by one was a third of a restart's CPU before its first send (bench/README.md, A restart's
// module loading). CommonJS packages (Fastify, Ajv, pino, the database drivers, ...) stay where npm put them and
// Node loads them as before: some read files beside themselves, and bundling them was not needed for the gain.
//
// Owns: dist/main.js, dist/cli/main.js, dist/chunks/ and their source maps. Never touches the rest of dist/, and
// never bundles a package that is loaded only on demand (Baileys: only a WhatsApp device loads it).
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, extname, join, sep } from 'node:path';

/** Packages left to Node whatever their module format. */
const NEVER_BUNDLED = new Set(['baileys']);
const NODE_MODULES = `${sep}node_modules${sep}`;

/** `@scope/name` or `name` of a bare import specifier. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The package directory a file in node_modules/ belongs to, or null for the gateway's own files. */
function packageDirOf(file) {
  const at = file.lastIndexOf(NODE_MODULES);
  if (at === -1) return null;
  const rest = file.slice(at + NODE_MODULES.length).split(sep);
  return file.slice(0, at + NODE_MODULES.length) + rest.slice(0, rest[0].startsWith('@') ? 2 : 1).join(sep);
}

const typeOfDir = new Map();
/** The `type` of the package.json nearest to `dir` (Node's own rule for what a .js file is). */
function nearestType(dir) {
  if (!typeOfDir.has(dir)) {
    const file = join(dir, 'package.json');
    let type;
    if (existsSync(file)) type = JSON.parse(readFileSync(file, 'utf8')).type ?? 'commonjs';
    else type = dirname(dir) === dir ? 'commonjs' : nearestType(dirname(dir));
    typeOfDir.set(dir, type);
  }
  return typeOfDir.get(dir);
}

/** Whether Node would load `file` as an ES module. */
function isEsModule(file) {
  const ext = extname(file);
  if (ext === '.mjs') return true;
  if (ext === '.cjs' || ext === '.json' || ext === '.node') return false;
  return nearestType(dirname(file)) === 'module';
}

/**
 * The rule, as an esbuild plugin: a package import that resolves to an ES module is bundled; one that resolves to
 * CommonJS, or names a package in `external`, stays an import that Node resolves from dist/ at run time. Packages
 * whose ES-module files import their own CommonJS files (an ES wrapper around a CommonJS package, as pg's and ws's)
 * are collected in `mixed`: the build is made again with them in `external`.
 */
function packagesRule(external, mixed) {
  return {
    name: 'bundle-es-module-packages',
    setup(bundler) {
      const resolve = (args) =>
        bundler.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: 'resolving',
        });
      bundler.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === 'resolving') return undefined;
        if (external.has(packageName(args.path))) return { external: true };
        // A CommonJS file reached only in the first pass, inside a package that the second leaves to Node.
        if (args.importer.includes(NODE_MODULES) && !isEsModule(args.importer)) return { external: true };
        const resolved = await resolve(args);
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        if (resolved.external || !isEsModule(resolved.path)) {
          // Left to Node, the specifier is resolved again from dist/ at run time: it must find the same copy.
          if (!resolved.external && resolved.path.split(NODE_MODULES).length > 2) {
            return { errors: [{ text: `${args.path} (CommonJS) resolves to ${resolved.path}, not found from dist/` }] };
          }
          return { external: true };
        }
        return { path: resolved.path };
      });
      bundler.onResolve({ filter: /^\./ }, async (args) => {
        if (args.pluginData === 'resolving' || !args.importer.includes(NODE_MODULES)) return undefined;
        if (!isEsModule(args.importer)) return undefined;
        const resolved = await resolve(args);
        if (resolved.errors.length === 0 && !resolved.external && !isEsModule(resolved.path)) {
          const dir = packageDirOf(args.importer);
          mixed.add(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name);
          return { external: true };
        }
        return resolved.errors.length > 0 ? { errors: resolved.errors } : { path: resolved.path };
      });
    },
  };
}

async function bundle(external, write) {
  const mixed = new Set();
  await build({
    entryPoints: { main: 'src/main.ts', 'cli/main': 'src/cli/main.ts' },
    outdir: 'dist',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    write,
    plugins: [packagesRule(external, mixed)],
    logLevel: 'warning',
  });
  return mixed;
}

const mixed = await bundle(NEVER_BUNDLED, false);
rmSync('dist/chunks', { recursive: true, force: true });
const left = await bundle(new Set([...NEVER_BUNDLED, ...mixed]), true);
if (left.size > 0) {
  console.error(`scripts/bundle.js: ES modules importing CommonJS files still bundled: ${[...left].join(', ')}`);
  process.exit(1);
}

// What is bundled is ES modules only: esbuild's `__require`, or `__dirname` or `__filename`, would mean the rule
// above let one in, and it would fail only when that line runs. Refuse such a build instead.
for (const dir of ['dist/chunks', 'dist/cli', 'dist']) {
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.js'))) {
    if (dir !== 'dist/chunks' && name !== 'main.js') continue;
    const code = readFileSync(join(dir, name), 'utf8');
    if (/\b__(dirname|filename|require)\b/.test(code)) {
      console.error(`scripts/bundle.js: ${join(dir, name)} has CommonJS code (__require, __dirname or __filename)`);
      process.exit(1);
    }
  }
}

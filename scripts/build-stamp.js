// Runs after every `npm run build` (npm's `postbuild`): records when the built output in dist/ was last made
// whole, so that `npm start` can tell a current build from a stale one without compiling (scripts/run-built.js).
//
// Owns: dist/.build-stamp. Never reads or changes anything else.
import { mkdirSync, writeFileSync } from 'node:fs';

mkdirSync('dist', { recursive: true });
writeFileSync('dist/.build-stamp', `${new Date().toISOString()}\n`);

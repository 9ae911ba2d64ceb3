// Runs one stand-in scenario in a process of its own: the stand-in and the pinned library as its client, in one
// process, printing `RESULT <json>` with what it observed. The library leaves an interval per socket behind (its
// caches' clean-up timers, which it never stops), so the scenario runs where those end with the process instead
// of in the test runner, whose leak check they would fail.
import { loadTlsIdentity } from '../../standin/certs.js';
import { startStandin } from '../../standin/server.js';
import { scenarios } from './scenarios.js';

const name = process.argv[2] ?? '';
const scenario = scenarios[name];
if (scenario === undefined) {
  console.error(`no scenario "${name}"`);
  process.exit(2);
}
// The CA this process trusts from its start (NODE_EXTRA_CA_CERTS, set by scenario.ts beside STANDIN_TLS_CA) is the
// one it serves with.
const ca = process.env.STANDIN_TLS_CA;
const standin = await startStandin({
  ...(ca === undefined ? {} : { tls: loadTlsIdentity(ca) }),
  log: process.env.STANDIN_LOG ? (l) => console.error(`[standin] ${l}`) : undefined,
});
let code = 0;
try {
  console.log(`RESULT ${JSON.stringify(await scenario(standin))}`);
} catch (error) {
  console.error((error as Error).stack ?? String(error));
  code = 1;
} finally {
  await standin.close();
}
process.exit(code);

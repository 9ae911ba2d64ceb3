// Runs stand-in scenarios in a process of its own: the stand-in and the pinned library as its client, in one
// process. It reads scenario names from stdin, one a line, runs each against a stand-in of its own, in order, and
// answers each with one line: `RESULT <json>` with what the scenario observed, or `FAILED <json>` with its error.
// One process serves a test file's scenarios: a process a scenario paid for loading tsx and the library each time.
// The library leaves an interval per socket behind (its caches' clean-up timers, which it never stops), so the
// scenarios run where those end with the process (it exits when stdin ends) instead of in the test runner, whose
// leak check they would fail.
import { createInterface } from 'node:readline';
import { loadTlsIdentity } from '../../standin/certs.js';
import { startStandin } from '../../standin/server.js';
import { scenarios } from './scenarios.js';

async function run(name: string): Promise<string> {
  const scenario = scenarios[name];
  if (scenario === undefined) return `FAILED ${JSON.stringify(`no scenario "${name}"`)}`;
  // The CA this process trusts from its start (NODE_EXTRA_CA_CERTS, set by scenario.ts beside STANDIN_TLS_CA) is
  // the one it serves with.
  const ca = process.env.STANDIN_TLS_CA;
  const standin = await startStandin({
    ...(ca === undefined ? {} : { tls: loadTlsIdentity(ca) }),
    log: process.env.STANDIN_LOG ? (l) => console.error(`[standin] ${l}`) : undefined,
  });
  try {
    return `RESULT ${JSON.stringify(await scenario(standin))}`;
  } catch (error) {
    return `FAILED ${JSON.stringify((error as Error).stack ?? String(error))}`;
  } finally {
    await standin.close();
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  console.error(`--- scenario ${line}`);
  console.log(await run(line.trim()));
}
process.exit(0);

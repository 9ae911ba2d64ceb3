/**
 * The gateway process: read settings, build the app, listen, and shut down
 * cleanly on SIGTERM/SIGINT (stop accepting, finish in-flight work, close).
 */
import { existsSync } from 'node:fs';
import { ConfigError, loadConfig } from './config.js';
import { StoreOpenError, storeFault } from './store/faults.js';

if (existsSync('.env')) process.loadEnvFile('.env');

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`Configuration error: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

// Loaded once the settings are good: a refused setting stops at once instead of after loading the whole gateway
// (about 2 s of CPU).
const { buildApp, listeningUrl, printBootstrapToken } = await import('./app.js');
let app;
try {
  app = await buildApp({ config });
} catch (error) {
  // The store cannot be opened or reached: one line saying where and why, not a stack.
  const message = startupStoreProblem(error, config.databaseUrl === null ? config.dataDir : 'DATABASE_URL');
  if (message === null) throw error;
  console.error(message);
  process.exit(1);
}
app.log.info(
  {
    network: config.network,
    // Names every network that runs: beside WhatsApp, sandbox accounts' devices are on the sandbox.
    networks: app.services.network.description,
    store: app.store.description,
    server: config.serverName,
  },
  'gateway starting',
);
// Devices paired on another network than their account's now (GATEWAY_NETWORK changed) stay there: one line names them.
try {
  const kept = await app.services.networks.kept();
  if (kept.length > 0) {
    const named = kept.map((d) => `${d.id} ${JSON.stringify(d.name)} on ${d.network}`).join(', ');
    app.log.warn(
      { devices: kept },
      `${kept.length} device(s) stay on the network they were paired on, not GATEWAY_NETWORK=${config.network}, ` +
        `until logged out or paired again: ${named}`,
    );
  }
} catch (error) {
  app.log.warn({ err: error }, 'could not list the devices kept on another network');
}

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}

try {
  await app.listen({ host: config.host, port: config.port });
} catch (error) {
  app.log.error({ err: error }, 'could not listen');
  await app.close();
  process.exit(1);
}
// Other nodes of a cluster forward to this address (GATEWAY_ADVERTISE_URL wins when set).
try {
  await app.services.cluster.advertise(listeningUrl(app.server.address(), config.host));
} catch (error) {
  app.log.error({ err: error }, 'could not record this node’s address; other nodes answer 503 for its devices');
}
// Only now: a start that failed above has not used up the one-time token of an empty store.
try {
  await printBootstrapToken(app, config);
} catch (error) {
  app.log.error({ err: error }, 'could not create the first API token; it is created at the next start');
}

function startupStoreProblem(error: unknown, where: string): string | null {
  if (error instanceof StoreOpenError) return `Store error: ${error.message}`;
  const fault = storeFault(error);
  if (fault === null) return null;
  const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return `Store error: the store (${where}) cannot be used: ${detail} (${fault.code})`;
}

#!/usr/bin/env node
/**
 * The command-line entry: `gateway <command>` (or `npm run cli -- <command>`).
 *
 * Owns: parsing arguments and printing results for operators: accounts,
 * tokens, device limits, migrations, network keys, the cluster's nodes, and
 * running the sandbox network as its own process. Works on the same store as the server (same settings).
 * Every command that opens the store names it on stderr first (one line; stdout stays the command's output),
 * and a store that was never set up is created only with `--create` (docs/cli.md): run where the gateway's
 * settings are missing, the CLI would otherwise make accounts and tokens in a store the gateway never reads.
 * Must never: print a token secret except the one just created.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { realpathSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { randomBytes } from 'node:crypto';
import { ConfigError, NETWORK_KEY_BYTES, loadConfig, type Config } from '../config.js';
import { systemClock } from '../clock.js';
import { openStore, sqliteFileOf, type Store } from '../store/store.js';
import { AccountsError, AccountsService } from '../accounts/service.js';
import { DevicesService } from '../devices/service.js';
import { PACKAGE_CODES, findPackage, quoteAvailable } from '../devices/packages.js';
import { ApiError } from '../errors.js';
import { sandboxScope } from '../network/create.js';
import { startSandboxServer } from '../network/sandbox/index.js';
import { clusterRepository } from '../cluster/repository.js';
import { nodeStatuses } from '../cluster/status.js';

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  out(line: string): void;
  err(line: string): void;
  /** Which store a command opened (one line). The process writes it to stderr; callers in tests may leave it out. */
  store?(line: string): void;
}

const processIo: CliIo = {
  env: process.env,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  store: (line) => process.stderr.write(`${line}\n`),
};

function freshStore(where: string): AccountsError {
  return new AccountsError(
    `no gateway store at ${where}; the CLI would create a new, empty one that the gateway does not use. ` +
      'Run it with the gateway’s settings (GATEWAY_DATA_DIR, or DATABASE_URL), or pass --create to create this store.',
  );
}

async function withAccounts<T>(
  io: CliIo,
  config: Config,
  create: boolean,
  work: (accounts: AccountsService, store: Store, migrated: string[]) => Promise<T>,
): Promise<T> {
  const options = { databaseUrl: config.databaseUrl, dataDir: config.dataDir };
  // Checked before opening: opening a missing SQLite file (and its directory) creates them.
  const file = sqliteFileOf(options);
  if (file !== null && !create && !existsSync(file)) {
    io.store?.(`Store: sqlite ${file}`);
    throw freshStore(`sqlite ${file}`);
  }
  const store = openStore(options);
  try {
    const { where, fresh } = await store.identify();
    io.store?.(`Store: ${where}`);
    if (fresh && !create) throw freshStore(where);
    const migrated = await store.migrate();
    const accounts = new AccountsService(store, systemClock, undefined, sandboxScope(config));
    return await work(accounts, store, migrated);
  } finally {
    await store.close();
  }
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new AccountsError(`"${value}" is not a whole number`);
  return Number(value);
}

function table(io: CliIo, rows: Array<Record<string, unknown>>): void {
  if (rows.length === 0) {
    io.out('(none)');
    return;
  }
  const keys = Object.keys(rows[0] ?? {});
  io.out(keys.join('\t'));
  for (const row of rows) io.out(keys.map((key) => String(row[key] ?? '')).join('\t'));
}

/** Runs one command line; resolves to the process exit code. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  // Read when a command needs the store, not before: `keygen` must work where no valid key is configured yet.
  let loaded: Config | undefined;
  const settings = (): Config => (loaded ??= loadConfig(io.env));
  const program = new Command('gateway')
    .description('Messaging gateway administration')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .option('--create', 'create the store when it does not exist yet (otherwise refused: see docs/cli.md)');
  const create = (): boolean => program.opts<{ create?: boolean }>().create === true;

  const accounts = program.command('accounts').description('Accounts');
  accounts
    .command('create <name>')
    .description('Create an account and print its first API token')
    .option('--max-devices <n>', 'device limit', '10')
    .option(
      '--sandbox',
      'a sandbox account: its devices live on the simulated network even when the gateway runs WhatsApp',
    )
    .action(async (name: string, options: { maxDevices: string; sandbox?: boolean }) => {
      await withAccounts(io, settings(), create(), async (service) => {
        const account = await service.createAccount(name, wholeNumber(options.maxDevices), {
          sandbox: options.sandbox === true,
        });
        const token = await service.createToken(account.id, 'initial');
        const kind = options.sandbox === true ? 'sandbox account' : 'account';
        io.out(`Created ${kind} "${account.name}" (id ${account.id}, device limit ${account.max_devices}).`);
        io.out(`API token (shown once, keep it): ${token.token}`);
      });
    });
  accounts
    .command('list')
    .description('List accounts')
    .action(async () => {
      await withAccounts(io, settings(), create(), async (service) => {
        const rows = await service.listAccounts();
        table(
          io,
          rows.map((r) => ({ id: r.id, name: r.name, max_devices: r.max_devices, sandbox: r.sandbox })),
        );
      });
    });
  accounts
    .command('set-limit <name> <maxDevices>')
    .description("Set an account's device limit")
    .action(async (name: string, max: string) => {
      await withAccounts(io, settings(), create(), async (service) => {
        await service.setMaxDevices(name, wholeNumber(max));
        io.out(`Account "${name}" may now have ${max} devices.`);
      });
    });

  const tokens = program.command('tokens').description('API tokens');
  tokens
    .command('create')
    .description('Create an API token and print it once')
    .requiredOption('--account <name>', 'account name')
    .option('--name <name>', 'a label for the token', 'cli')
    .action(async (options: { account: string; name: string }) => {
      await withAccounts(io, settings(), create(), async (service) => {
        const account = await service.findAccount(options.account);
        const token = await service.createToken(account.id, options.name);
        io.out(`Token ${token.id} "${token.name}" for account "${account.name}" (shown once, keep it):`);
        io.out(token.token);
      });
    });
  tokens
    .command('list')
    .description("List an account's tokens (never their secrets)")
    .requiredOption('--account <name>', 'account name')
    .action(async (options: { account: string }) => {
      await withAccounts(io, settings(), create(), async (service) => {
        const account = await service.findAccount(options.account);
        const rows = await service.listTokens(account.id);
        table(
          io,
          rows.map((r) => ({
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            created_at: new Date(r.created_at).toISOString(),
            last_used_at: r.last_used_at === null ? '' : new Date(r.last_used_at).toISOString(),
          })),
        );
      });
    });
  tokens
    .command('revoke <id>')
    .description('Revoke a token')
    .requiredOption('--account <name>', 'account name')
    .action(async (id: string, options: { account: string }) => {
      await withAccounts(io, settings(), create(), async (service) => {
        const account = await service.findAccount(options.account);
        if (!(await service.revokeToken(account.id, wholeNumber(id)))) {
          throw new AccountsError(`account "${account.name}" has no active token ${id}`);
        }
        io.out(`Token ${id} revoked.`);
      });
    });

  const devices = program.command('devices').description('Devices (administrative state)');
  for (const [name, status] of [
    ['suspend', 'SUSPENDED'],
    ['resume', 'ACTIVE'],
  ] as const) {
    devices
      .command(`${name} <id>`)
      .description(
        name === 'suspend' ? 'Suspend a device: it can neither send nor pair' : 'Make a suspended device active again',
      )
      .action(async (id: string) => {
        await withAccounts(io, settings(), create(), async (_service, store) => {
          try {
            await new DevicesService(store, systemClock).setStatus(wholeNumber(id), status);
          } catch (error) {
            if (error instanceof ApiError) throw new AccountsError(`no device ${id}`);
            throw error;
          }
          io.out(`Device ${id} is now ${status}.`);
        });
      });
  }

  devices
    .command('package <id> <code>')
    .description(
      `Change a device's package (${PACKAGE_CODES.join(', ')}). Its allowance becomes the new plan's; ` +
        'messages already used still count against it unless --reset-usage',
    )
    .option('--reset-usage', 'start the used-message count again from 0')
    .action(async (id: string, code: string, options: { resetUsage?: boolean }) => {
      await withAccounts(io, settings(), create(), async (_service, store) => {
        let row;
        try {
          row = await new DevicesService(store, systemClock).setPackage(wholeNumber(id), code, {
            resetUsage: options.resetUsage === true,
          });
        } catch (error) {
          if (error instanceof ApiError && error.code === 'INVALID_PACKAGE') {
            throw new AccountsError(`unknown package "${code}"; one of ${PACKAGE_CODES.join(', ')}`);
          }
          if (error instanceof ApiError) throw new AccountsError(`no device ${id}`);
          throw error;
        }
        const plan = findPackage(row.package_code);
        const allowance = row.quota_limit < 0 ? 'unlimited messages' : `${row.quota_limit} messages`;
        io.out(
          `Device ${id} is now on ${row.package_code} (${plan?.name ?? row.package_code}): ${allowance}, ` +
            `${row.quote_used} used, ${row.quota_limit < 0 ? 'no limit' : quoteAvailable(row.quota_limit, row.quote_used)} available.`,
        );
      });
    });

  const sandbox = program.command('sandbox').description('The simulated network');
  sandbox
    .command('serve')
    .description('Run the sandbox network as its own process; gateways use GATEWAY_NETWORK=sandbox+ws://host:port')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', '4000')
    .option('--state <file>', 'keep phones, groups and sessions in this JSON file across restarts')
    .option('--qr-rotate-ms <ms>', 'how often a pairing QR code rotates', '20000')
    .action(async (options: { host: string; port: string; state?: string; qrRotateMs: string }) => {
      const server = await startSandboxServer({
        host: options.host,
        port: wholeNumber(options.port),
        qrRotateMs: wholeNumber(options.qrRotateMs),
        ...(options.state === undefined ? {} : { statePath: options.state }),
      });
      io.out(JSON.stringify({ msg: 'sandbox listening', url: `ws://${options.host}:${server.port}` }));
      await new Promise<void>((resolve) => {
        const stop = () => void server.close().then(resolve, resolve);
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
    });

  const cluster = program
    .command('cluster')
    .description('The nodes sharing a PostgreSQL store (docs/internals.md, Clusters)');
  cluster
    .command('status')
    .description(
      'List the nodes: status (ACTIVE or DOWN), seconds since their last heartbeat, devices held and connected',
    )
    .action(async () => {
      const config = settings();
      await withAccounts(io, config, create(), async (_service, store) => {
        if (!store.capabilities.sharedByProcesses) {
          io.out(`One node (SQLite store): ${config.serverName}. A cluster needs DATABASE_URL=postgres://...`);
          return;
        }
        const rows = await clusterRepository.nodes(store.db);
        table(
          io,
          nodeStatuses(rows, systemClock.now()).map((s) => ({
            node: s.node,
            status: s.status,
            heartbeat_age_s: s.heartbeatAgeS,
            devices: s.devices,
            connected: s.connected,
            url: s.url,
          })),
        );
      });
    });

  program
    .command('keygen')
    .description('Print a fresh GATEWAY_NETWORK_KEY (32 random bytes, base64) for sealing stored network sessions')
    .action(() => {
      io.out(randomBytes(NETWORK_KEY_BYTES).toString('base64'));
    });

  program
    .command('migrate')
    .description('Run pending store migrations (the server also does this at start-up)')
    .action(async () => {
      await withAccounts(io, settings(), create(), async (_service, _store, ran) => {
        io.out(ran.length === 0 ? 'Nothing to migrate.' : `Ran: ${ran.join(', ')}`);
      });
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof AccountsError) {
      io.err(`error: ${error.message}`);
      return 1;
    }
    if (error instanceof ConfigError) {
      io.err(`Configuration error: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

function invokedDirectly(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  if (existsSync('.env')) process.loadEnvFile('.env');
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? `error: ${error.message}` : error);
      process.exit(1);
    },
  );
}

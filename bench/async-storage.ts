// Benchmark: what the WhatsApp library's per-socket transaction storage costs every promise of the process on
// Node.js 20, as the library leaves it and as the connector keeps it: in one storage shared by every socket
// (src/network/whatsapp/transaction-storage.ts). N key stores are made with the library's own
// `addTransactionCapability` (one per socket, as the library makes them), each runs one transaction, ended or still
// running (as a send holds one across network round trips); then the same loop of promises is timed. Each case runs in a fresh child process so the storages of one cannot weigh on
// the other; the figure printed is the median of 5 rounds, microseconds per loop turn (an awaited
// `Promise.resolve().then()`: three async resources).
//
//   node --import tsx bench/async-storage.ts [sockets ...]
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { addTransactionCapability, type SignalKeyStore } from 'baileys';
import pino from 'pino';
import { shareTransactionStorage } from '../src/network/whatsapp/transaction-storage.js';

const TURNS = 20_000;

async function child(sockets: number, sharedStorage: boolean, held: boolean): Promise<void> {
  const store: SignalKeyStore = { get: async () => ({}), set: async () => undefined };
  const logger = pino({ level: 'silent' });
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  const running: Promise<unknown>[] = [];
  for (let i = 0; i < sockets; i++) {
    const keys = addTransactionCapability(store, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    if (sharedStorage) shareTransactionStorage(keys);
    const work = keys.transaction(async () => {
      await keys.set({ session: { [String(i)]: new Uint8Array(1) } });
      if (held) await open; // as a send holds its transaction across network round trips
    }, 'k');
    if (held) running.push(work);
    else await work;
  }
  const rounds: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < TURNS; i++) await Promise.resolve(i).then((x) => x);
    rounds.push(Number(process.hrtime.bigint() - started) / 1000 / TURNS);
  }
  release();
  await Promise.all(running);
  rounds.sort((a, b) => a - b);
  process.stdout.write(JSON.stringify(rounds[2]));
}

if (process.argv[2] === '--child') {
  await child(Number(process.argv[3]), process.argv[4] === 'shared', process.argv[5] === 'held');
} else {
  const counts = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [0, 10, 100, 1000];
  const measure = (sockets: number, mode: string, held: string) =>
    Number(
      execFileSync(
        process.execPath,
        ['--import', 'tsx', 'bench/async-storage.ts', '--child', String(sockets), mode, held],
        { encoding: 'utf8' },
      ),
    );
  console.log(`Node.js ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`);
  console.log(
    '| Sockets | Their transactions | Library as is (µs per turn) | One shared storage (µs per turn) | Ratio |',
  );
  console.log(
    '| ------: | ------------------ | --------------------------: | -------------------------------: | ----: |',
  );
  for (const sockets of counts)
    for (const held of ['ended', 'held']) {
      const asIs = measure(sockets, 'as-is', held);
      const shared = measure(sockets, 'shared', held);
      console.log(
        `| ${sockets} | ${held === 'held' ? 'all running' : 'ended'} | ${asIs.toFixed(2)} | ${shared.toFixed(2)} | ${(asIs / shared).toFixed(1)} |`,
      );
    }
}

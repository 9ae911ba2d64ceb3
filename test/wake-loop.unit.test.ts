// The wake-up loop the deliverer, the cluster node and the dispatch lanes share: wake-ups during a run coalesce into
// one more run, stop() waits for the run in flight, errors go to the handler and the loop goes on after a backoff.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/clock.js';
import { WakeLoop, type NextRun } from '../src/wake-loop.js';
import { waitFor } from './helpers/wait.js';

// Time moves only when a test moves it: no test here waits for a timer.
let clock = new FakeClock();

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const loops: WakeLoop[] = [];
afterEach(async () => {
  await Promise.all(loops.splice(0).map((loop) => loop.stop()));
  expect(clock.pending).toBe(0);
  clock = new FakeClock();
});

/** Lets the promises a run awaits settle (no timer involved). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

function loopOf(run: () => Promise<NextRun>, extra: Partial<ConstructorParameters<typeof WakeLoop>[0]> = {}): WakeLoop {
  const loop = new WakeLoop({ run, clock, onError: () => undefined, afterErrorMs: () => 1, ...extra });
  loops.push(loop);
  return loop;
}

describe('WakeLoop', () => {
  it('runs again when woken after its run ended but before the loop let go of it (a wake-up is never lost)', async () => {
    // The run ends; a wake-up comes `depth` promise turns later. Wherever it lands, the loop runs once more.
    for (let depth = 0; depth < 12; depth++) {
      let runs = 0;
      const loop = loopOf(() => {
        runs += 1;
        const ended = Promise.resolve(null);
        if (runs === 1) {
          let later: Promise<unknown> = ended;
          for (let i = 0; i < depth; i++) later = later.then(() => undefined);
          void later.then(() => loop.wake());
        }
        return ended;
      });
      loop.wake();
      await settle();
      expect(runs, `a wake-up ${depth} turns after the run`).toBe(2);
      await loop.stop();
    }
  });

  it('runs once more, once, when woken any number of times during a run', async () => {
    const gates = [deferred(), deferred()];
    let runs = 0;
    const loop = loopOf(async () => {
      const gate = gates[runs++];
      await gate?.promise;
      return null;
    });
    loop.wake();
    expect(runs).toBe(1);
    loop.wake();
    loop.wake();
    loop.wake();
    gates[0]!.resolve();
    await waitFor(
      () => runs,
      (n) => n === 2,
      { what: 'the repeat' },
    );
    expect(loop.running).toBe(true);
    gates[1]!.resolve();
    await loop.settled();
    expect(runs).toBe(2);
    expect(loop.running).toBe(false);
  });

  it('stop() waits for the run in flight, and nothing runs after it', async () => {
    const gate = deferred();
    let runs = 0;
    let finished = false;
    const loop = loopOf(async () => {
      runs += 1;
      await gate.promise;
      finished = true;
      return clock.now();
    });
    loop.wake();
    loop.wake();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(finished).toBe(true);
    loop.wake();
    loop.wakeAt(clock.now());
    clock.advance(1);
    expect(runs).toBe(1);
    expect(loop.running).toBe(false);
  });

  it('hands errors to the handler and runs again after the backoff, counting failures in a row', async () => {
    const seen: Array<[string, number]> = [];
    const waits: number[] = [];
    let runs = 0;
    const loop = loopOf(
      async () => {
        runs += 1;
        if (runs <= 3) throw new Error(`failure ${runs}`);
        return null;
      },
      {
        onError: (error, failures) => seen.push([(error as Error).message, failures]),
        afterErrorMs: (failures) => {
          waits.push(failures);
          return 1_000 * failures;
        },
      },
    );
    loop.wake();
    await loop.settled();
    expect(runs).toBe(1);
    // Each failure waits its backoff, and not a moment less.
    for (const [failures, wait] of [
      [1, 1_000],
      [2, 2_000],
      [3, 3_000],
    ] as const) {
      clock.advance(wait - 1);
      await settle();
      expect(runs).toBe(failures);
      clock.advance(1);
      await loop.settled();
      expect(runs).toBe(failures + 1);
    }
    expect(clock.pending).toBe(0);
    expect(seen).toEqual([
      ['failure 1', 1],
      ['failure 2', 2],
      ['failure 3', 3],
    ]);
    expect(waits).toEqual([1, 2, 3]);
  });

  it('arms the time a run returns; a sooner wakeAt wins, a later one does not', async () => {
    let runs = 0;
    const loop = loopOf(async () => {
      runs += 1;
      return runs <= 2 ? clock.now() + 60_000 : null;
    });
    loop.wake();
    await loop.settled();
    clock.advance(59_999);
    expect(runs).toBe(1);
    clock.advance(1);
    await loop.settled();
    expect(runs).toBe(2);
    // Armed for 60 s again: a later time does not replace it, a sooner one does.
    loop.wakeAt(clock.now() + 120_000);
    loop.wakeAt(clock.now() + 5);
    clock.advance(5);
    await loop.settled();
    expect(runs).toBe(3);
    expect(clock.pending).toBe(0);
  });

  it('a wake-up drops the armed timer: the run decides again when the next is due', async () => {
    let runs = 0;
    const loop = loopOf(async () => {
      runs += 1;
      return runs === 1 ? clock.now() + 1_000 : null;
    });
    loop.wake();
    await loop.settled();
    expect(clock.pending).toBe(1);
    loop.wake();
    await loop.settled();
    expect(runs).toBe(2);
    expect(clock.pending).toBe(0);
    clock.advance(1_000);
    expect(runs).toBe(2);
  });
});

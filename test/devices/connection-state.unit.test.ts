// The connection state machine of one device (src/devices/connection-state.ts; docs/internals.md, Devices and
// pairing): the table in the module's header, its data, and the transition functions say the same thing.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { FakeClock, type Timer } from '../../src/clock.js';
import type { NetworkConnection } from '../../src/network/network.js';
import {
  TRANSITIONS,
  isIn,
  isLive,
  showQr,
  startPairing,
  startSession,
  toConnecting,
  toDropped,
  toEnded,
  toOpen,
  toOpening,
  toQueued,
  toScheduled,
  type ConnectionState,
  type Live,
  type Pairing,
  type StateKind,
} from '../../src/devices/connection-state.js';
import { ConnectSlots } from '../../src/devices/connect-slots.js';

// The states' timers are the manager's clock's; they run only when a test moves it.
let clock = new FakeClock(0);
afterEach(() => {
  clock = new FakeClock(0);
});

function timer(): Timer {
  return clock.after(60_000, () => undefined);
}

/** A QR waiter's wait is real time (the network's answer), as in src/devices/pairing-attempts.ts. */
const waiterTimers: NodeJS.Timeout[] = [];
afterEach(() => waiterTimers.splice(0).forEach(clearTimeout));

function waiterTimer(): NodeJS.Timeout {
  const t = setTimeout(() => undefined, 60_000);
  waiterTimers.push(t);
  return t;
}

function conn(): NetworkConnection & { closed: number } {
  const c = { closed: 0, close: () => void (c.closed += 1) };
  return c as unknown as NetworkConnection & { closed: number };
}

function slot(): { release(): void; released: number } {
  const s = { released: 0, release: () => void (s.released += 1) };
  return s;
}

/** A live device in each state, reached through the transitions only. */
function reach(kind: StateKind): Live {
  if (kind === 'pairing') return startPairing(1, 7, { conn: conn(), timer: timer(), endsAt: 0 });
  const scheduled = startSession(1, 7, timer());
  if (kind === 'scheduled') return scheduled;
  const queued = toQueued(scheduled);
  if (kind === 'queued') return queued;
  const opening = toOpening(queued, slot());
  if (kind === 'opening') return opening;
  const connecting = toConnecting(opening, conn(), 2);
  if (kind === 'connecting') return connecting;
  if (kind === 'dropped') return toDropped(connecting, 0, 30_000);
  const open = toOpen(connecting, 0);
  if (kind === 'open') return open;
  toEnded(open, () => new Error('ended'));
  return open;
}

const KINDS: StateKind[] = ['pairing', 'scheduled', 'queued', 'opening', 'connecting', 'open', 'dropped', 'ended'];

/** Each transition, tried on a device in `live`'s state; throws when the function does not take that state. */
function run(via: string, live: Live | null): Live {
  const expect = <K extends StateKind>(l: Live | null, ...kinds: K[]) => {
    if (l === null || !isIn(l, ...kinds)) throw new Error(`${via} does not leave ${l?.state.kind ?? '(none)'}`);
    return l;
  };
  switch (via) {
    case 'startPairing':
      if (live !== null) throw new Error('starts from no record');
      return startPairing(1, 7, { conn: conn(), timer: timer(), endsAt: 0 });
    case 'startSession':
      if (live !== null) throw new Error('starts from no record');
      return startSession(1, 7, timer());
    case 'showQr': {
      const l = expect(live, 'pairing');
      showQr(l, 'qr-1');
      return l;
    }
    case 'toQueued':
      return toQueued(expect(live, 'scheduled'));
    case 'toOpening':
      return toOpening(expect(live, 'queued'), slot());
    case 'toConnecting':
      return toConnecting(expect(live, 'opening', 'pairing'), conn(), 3);
    case 'toScheduled':
      return toScheduled(expect(live, 'dropped', 'opening'), timer());
    case 'toOpen':
      return toOpen(expect(live, 'connecting'), 0);
    case 'toDropped':
      return toDropped(expect(live, 'connecting', 'open'), 0, 30_000);
    case 'toEnded': {
      const l = live;
      if (l === null || !isLive(l)) throw new Error('ends a live record only');
      toEnded(l, () => new Error('ended'));
      return l;
    }
    default:
      throw new Error(`no transition ${via}`);
  }
}

describe('the connection state table', () => {
  it('in the module header is the one in TRANSITIONS', () => {
    const source = readFileSync(new URL('../../src/devices/connection-state.ts', import.meta.url), 'utf8');
    const rows = source
      .split('\n')
      .map((line) =>
        line
          .replace(/^ \*\s+/, '')
          .split('|')
          .map((cell) => cell.trim()),
      )
      .filter((cells) => cells.length === 4 && cells[0] !== '' && cells[0] !== 'from' && !cells[0]!.startsWith('-'))
      .map(([from, , to, via]) => ({ from, to, via }));
    expect(rows).toEqual(TRANSITIONS.map(({ from, to, via }) => ({ from, to, via })));
  });

  it('holds for every transition function, from every state it names, and from no other', () => {
    for (const from of [null, ...KINDS]) {
      const name = from ?? '(none)';
      for (const via of new Set(TRANSITIONS.map((row) => row.via))) {
        const rows = TRANSITIONS.filter(
          (row) =>
            row.via === via && (row.from === name || (row.from === '(live)' && from !== null && from !== 'ended')),
        );
        const live = from === null ? null : reach(from);
        if (rows.length === 0) {
          expect(() => run(via, live), `${via} from ${name}`).toThrow();
          continue;
        }
        expect(run(via, live).state.kind, `${via} from ${name}`).toBe(rows[0]!.to);
      }
    }
  });

  it('types each transition by the states it may leave', () => {
    type From<F extends (live: never, ...rest: never[]) => unknown> =
      Parameters<F>[0] extends Live<infer S> ? S['kind'] : never;
    expectTypeOf<From<typeof toQueued>>().toEqualTypeOf<'scheduled'>();
    expectTypeOf<From<typeof toOpening>>().toEqualTypeOf<'queued'>();
    expectTypeOf<From<typeof toConnecting>>().toEqualTypeOf<'opening' | 'pairing'>();
    expectTypeOf<From<typeof toOpen>>().toEqualTypeOf<'connecting'>();
    expectTypeOf<From<typeof toDropped>>().toEqualTypeOf<'connecting' | 'open'>();
    expectTypeOf<From<typeof toScheduled>>().toEqualTypeOf<'dropped' | 'opening'>();
    expectTypeOf<From<typeof toEnded>>().toEqualTypeOf<Exclude<StateKind, 'ended'>>();
    // Compiled, never run: the calls below are type errors, which tsc (npm run typecheck) checks.
    const illegal = (pairing: Live<Pairing>, live: Live) => {
      // A pairing attempt cannot open before its pairing is recorded.
      // @ts-expect-error pairing is not a state toOpen leaves
      toOpen(pairing, 0);
      // Nor can a device of unknown state be moved without asking which state it is in.
      // @ts-expect-error Live<ConnectionState> is not Live<Scheduled>
      toQueued(live);
      if (isIn(live, 'scheduled')) toQueued(live);
    };
    expect(typeof illegal).toBe('function');
  });
});

describe('leaving a state undoes what it held', () => {
  it('gives a slot back once, when the connection opens, drops or ends', () => {
    for (const leave of ['open', 'drop', 'end'] as const) {
      const s = slot();
      const connecting = toConnecting(toOpening(toQueued(startSession(1, 7, timer())), s), conn(), 2);
      if (leave === 'open') toOpen(connecting, 0);
      else if (leave === 'drop') toDropped(connecting, 0, 30_000);
      else toEnded(connecting, () => new Error('ended'));
      expect(s.released, leave).toBe(1);
    }
  });

  it('resets the backoff after a stable connection, not after a flapping one', () => {
    const open = toOpen(toConnecting(toOpening(toQueued(startSession(1, 7, timer())), slot()), conn(), 2), 1_000);
    open.state.retry.failures = 4;
    const dropped = toDropped(open, 1_000 + 29_999, 30_000);
    expect(dropped.state.retry.failures).toBe(4);
    const again = toOpen(toConnecting(toOpening(toQueued(toScheduled(dropped, timer())), slot()), conn(), 3), 0);
    expect(toDropped(again, 30_000, 30_000).state.retry.failures).toBe(0);
  });

  it('ending a pairing fails its QR waiters, stops its window and closes its connection', () => {
    const c = conn();
    const window = vi.fn();
    const pairing = startPairing(1, 7, { conn: c, timer: clock.after(1_000, window), endsAt: 1_000 });
    const reject = vi.fn();
    pairing.state.waiters.push({ resolve: vi.fn(), reject, timer: waiterTimer() });
    const from: ConnectionState = toEnded(pairing, () => new Error('the pairing attempt ended'));
    expect(from.kind).toBe('pairing');
    expect(reject).toHaveBeenCalledWith(new Error('the pairing attempt ended'));
    expect(c.closed).toBe(1);
    expect(pairing.generation).toBe(-1);
    expect(pairing.state).toEqual({ kind: 'ended', was: 'pairing', last: c });
    // The window's timer is gone: the end of the window passes without it.
    expect(clock.pending).toBe(0);
    clock.advance(1_000);
    expect(window).not.toHaveBeenCalled();
  });

  it('keeps the dropped connection while waiting, to settle its writes', () => {
    const c = conn();
    const connecting = toConnecting(toOpening(toQueued(startSession(1, 7, timer())), slot()), c, 2);
    const scheduled = toScheduled(toDropped(connecting, 0, 30_000), timer());
    expect(scheduled.state.previous).toBe(c);
    expect(clock.pending).toBe(2);
    toEnded(scheduled, () => new Error('ended'));
    expect(c.closed).toBe(1);
    // The first session's timer is the test's own (never cancelled by a transition); the scheduled one's is gone.
    expect(clock.pending).toBe(1);
  });
});

describe('connect slots', () => {
  it('runs at most the limit at once, the rest in order as slots come back, none once closed', () => {
    const slots = new ConnectSlots(2);
    const held: Array<{ release(): void }> = [];
    const ran: number[] = [];
    for (const n of [1, 2, 3, 4]) slots.acquire((s) => (ran.push(n), held.push(s)));
    expect(ran).toEqual([1, 2]);
    held[0]!.release();
    held[0]!.release(); // twice is once
    expect(ran).toEqual([1, 2, 3]);
    slots.close();
    held[1]!.release();
    expect(ran).toEqual([1, 2, 3]);
  });
});

/**
 * The state of one device this node holds a connection for, and the only functions that change it
 * (docs/internals.md, Devices and pairing: the connection state machine).
 *
 *   from       | event                                        | to         | transition
 *   -----------+----------------------------------------------+------------+-------------
 *   (none)     | a QR asked for                               | pairing    | startPairing
 *   (none)     | held here, restarted or resumed              | scheduled  | startSession
 *   pairing    | a QR code                                    | pairing    | showQr
 *   pairing    | paired, and the pairing recorded             | connecting | toConnecting
 *   scheduled  | its timer fires                              | queued     | toQueued
 *   queued     | a connect slot is free                       | opening    | toOpening
 *   opening    | the stored session read; connected under it  | connecting | toConnecting
 *   opening    | the store did not answer                     | scheduled  | toScheduled
 *   connecting | connected                                    | open       | toOpen
 *   connecting | disconnected                                 | dropped    | toDropped
 *   open       | disconnected                                 | dropped    | toDropped
 *   dropped    | the drop written; the backoff chosen         | scheduled  | toScheduled
 *   (live)     | dropped here: logged out, window over, not   | ended      | toEnded
 *              | held, released, refused, restarted, closing  |            |
 *
 * (none) is a device with no record here; (live) is every state but ended. Events a state does not list change
 * nothing (a late `connected` of a refused pairing, a `qr` after the pairing); stale connections' events never
 * reach a state (their generation is over). An event already heard when its device ended here is still written
 * (a phone's `paired`, a `logged_out`, a `disconnected`), with no transition. TRANSITIONS below is this table
 * as data, walked by test/devices/connection-state.unit.test.ts.
 *
 * Each state carries only what is valid in it: a QR and its waiters only while pairing, a connect slot only
 * while opening or connecting from a stored session, the open connection only when open. The reconnect
 * record (failures, recent drops) lives in the session states and is handed on by each transition.
 * A transition takes the device in the state(s) it may leave, so an illegal one does not compile.
 *
 * Owns: the shape of the states and the moves between them, with what leaving a state must undo (its timers,
 * its slot). Must never: write the store, talk to the cluster, open a connection or tell listeners; the
 * connection manager does those around the transitions.
 */
import type { Timer } from '../clock.js';
import type { NetworkConnection } from '../network/network.js';

/** The table above, row by row: `(none)` and `(live)` as written there. */
export const TRANSITIONS: ReadonlyArray<{
  readonly from: StateKind | '(none)' | '(live)';
  readonly to: StateKind;
  readonly via: string;
}> = [
  { from: '(none)', to: 'pairing', via: 'startPairing' },
  { from: '(none)', to: 'scheduled', via: 'startSession' },
  { from: 'pairing', to: 'pairing', via: 'showQr' },
  { from: 'pairing', to: 'connecting', via: 'toConnecting' },
  { from: 'scheduled', to: 'queued', via: 'toQueued' },
  { from: 'queued', to: 'opening', via: 'toOpening' },
  { from: 'opening', to: 'connecting', via: 'toConnecting' },
  { from: 'opening', to: 'scheduled', via: 'toScheduled' },
  { from: 'connecting', to: 'open', via: 'toOpen' },
  { from: 'connecting', to: 'dropped', via: 'toDropped' },
  { from: 'open', to: 'dropped', via: 'toDropped' },
  { from: 'dropped', to: 'scheduled', via: 'toScheduled' },
  { from: '(live)', to: 'ended', via: 'toEnded' },
];

/** A caller waiting for the first QR code of a pairing attempt. */
export interface QrWaiter {
  resolve(qr: string): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** One of the limited simultaneous connects (see ConnectSlots); releasing it twice is harmless. */
export interface Slot {
  release(): void;
}

/** Reconnect bookkeeping of a paired device, kept across its session states. */
export interface Retry {
  failures: number;
  /** Times of the recent drops, for the reconnect-loop warning. */
  drops: number[];
}

/** A pairing attempt: a connection without a session, showing QR codes until a phone scans one or the window ends. */
export interface Pairing {
  readonly kind: 'pairing';
  readonly conn: NetworkConnection;
  qr: string | null;
  readonly waiters: QrWaiter[];
  /** Ends the attempt when the window closes (set through the manager's clock). */
  readonly timer: Timer;
  /** When the pairing window closes (epoch ms). */
  readonly endsAt: number;
}

/** A paired device waiting to connect from its stored session (at once, or after a backoff). */
export interface Scheduled {
  readonly kind: 'scheduled';
  /** Asks for a connect slot: at once, or when the backoff has passed on the manager's clock. */
  readonly timer: Timer;
  readonly retry: Retry;
  /** The connection that dropped before, whose background writes may still run (settled before a handover). */
  readonly previous: NetworkConnection | null;
}

/** Waiting for one of the limited connect slots. */
export interface Queued {
  readonly kind: 'queued';
  readonly retry: Retry;
  readonly previous: NetworkConnection | null;
}

/** Holding a connect slot, reading the stored session. */
export interface Opening {
  readonly kind: 'opening';
  readonly slot: Slot;
  readonly retry: Retry;
  readonly previous: NetworkConnection | null;
}

/** A connection made with a session, not open yet; it holds a slot unless it came from a pairing. */
export interface Connecting {
  readonly kind: 'connecting';
  readonly conn: NetworkConnection;
  readonly slot: Slot | null;
  readonly retry: Retry;
}

/** Open: messages go through it. */
export interface Open {
  readonly kind: 'open';
  readonly conn: NetworkConnection;
  /** When it opened (the manager's clock), to tell a flapping connection from a stable one. */
  readonly openedAt: number;
  readonly retry: Retry;
}

/** The network dropped the connection; the drop is being written before the reconnect is scheduled. */
export interface Dropped {
  readonly kind: 'dropped';
  readonly conn: NetworkConnection;
  readonly retry: Retry;
}

/** Forgotten here: nothing of it runs any more. Terminal. */
export interface Ended {
  readonly kind: 'ended';
  /** What ended: a late event of its connection is read as the pairing's or the session's. */
  readonly was: 'pairing' | 'session';
  /** The connection it had, closed: a pairing heard just before it ended is still unlinked through it when refused. */
  readonly last: NetworkConnection | null;
}

export type ConnectionState = Pairing | Scheduled | Queued | Opening | Connecting | Open | Dropped | Ended;
export type StateKind = ConnectionState['kind'];

/** One device held here, in state S. The record lives as long as one run of pairing or of session connects. */
export interface Live<S extends ConnectionState = ConnectionState> {
  /** Tells the current connection's events from a stale one's; -1 once ended. */
  generation: number;
  /** The lease epoch this node holds the device under; its writes are fenced by it. */
  readonly epoch: number;
  /** Network events of one device are applied in order. */
  chain: Promise<void>;
  state: S;
}

export function isIn<K extends StateKind>(
  live: Live,
  ...kinds: K[]
): live is Live<Extract<ConnectionState, { kind: K }>> {
  return (kinds as StateKind[]).includes(live.state.kind);
}

/** Any state but ended. */
export function isLive(live: Live): live is Live<Exclude<ConnectionState, Ended>> {
  return live.state.kind !== 'ended';
}

function move<S extends ConnectionState>(live: Live, state: S): Live<S> {
  live.state = state;
  return live as Live<S>;
}

export function newRetry(): Retry {
  return { failures: 0, drops: [] };
}

/** (none) → pairing. */
export function startPairing(
  generation: number,
  epoch: number,
  state: Omit<Pairing, 'kind' | 'qr' | 'waiters'>,
): Live<Pairing> {
  return { generation, epoch, chain: Promise.resolve(), state: { kind: 'pairing', qr: null, waiters: [], ...state } };
}

/** (none) → scheduled: a paired device's first connect from its stored session. */
export function startSession(generation: number, epoch: number, timer: Timer): Live<Scheduled> {
  return {
    generation,
    epoch,
    chain: Promise.resolve(),
    state: { kind: 'scheduled', timer, retry: newRetry(), previous: null },
  };
}

/** scheduled → queued: its timer fired; a connect slot is asked for. */
export function toQueued(live: Live<Scheduled>): Live<Queued> {
  const { retry, previous } = live.state;
  return move(live, { kind: 'queued', retry, previous });
}

/** queued → opening: it holds a slot now. */
export function toOpening(live: Live<Queued>, slot: Slot): Live<Opening> {
  const { retry, previous } = live.state;
  return move(live, { kind: 'opening', slot, retry, previous });
}

/**
 * opening → connecting (a connection from the stored session, under a new generation; the slot is kept until it
 * opens or drops), or pairing → connecting (the pairing was recorded: the same connection goes on as a session).
 */
export function toConnecting(
  live: Live<Opening | Pairing>,
  conn: NetworkConnection,
  generation: number,
): Live<Connecting> {
  const from = live.state;
  if (from.kind === 'pairing') {
    from.timer.cancel();
    return move(live, { kind: 'connecting', conn, slot: null, retry: newRetry() });
  }
  live.generation = generation;
  return move(live, { kind: 'connecting', conn, slot: from.slot, retry: from.retry });
}

/** connecting → open: the slot goes back. */
export function toOpen(live: Live<Connecting>, openedAt: number): Live<Open> {
  const { conn, slot, retry } = live.state;
  slot?.release();
  return move(live, { kind: 'open', conn, openedAt, retry });
}

/** connecting | open → dropped: a connection that stayed open `stableMs` starts the backoff again from its base. */
export function toDropped(live: Live<Connecting | Open>, now: number, stableMs: number): Live<Dropped> {
  const from = live.state;
  if (from.kind === 'connecting') from.slot?.release();
  else if (now - from.openedAt >= stableMs) from.retry.failures = 0;
  return move(live, { kind: 'dropped', conn: from.conn, retry: from.retry });
}

/** dropped | opening → scheduled: the next connect, after `timer`; an opening gives its slot back. */
export function toScheduled(live: Live<Dropped | Opening>, timer: Timer): Live<Scheduled> {
  const from = live.state;
  if (from.kind === 'opening') from.slot.release();
  const previous = from.kind === 'dropped' ? from.conn : from.previous;
  return move(live, { kind: 'scheduled', timer, retry: from.retry, previous });
}

/** A pairing attempt's QR code (the network rotates it): kept, and handed to the callers waiting for the first. */
export function showQr(live: Live<Pairing>, qr: string): void {
  live.state.qr = qr;
  for (const waiter of live.state.waiters.splice(0)) {
    clearTimeout(waiter.timer);
    waiter.resolve(qr);
  }
}

/** The callers waiting for a pairing attempt's first QR code hear `error` instead. */
export function failQrWaiters(state: Pairing, error: () => Error): void {
  for (const waiter of state.waiters.splice(0)) {
    clearTimeout(waiter.timer);
    waiter.reject(error());
  }
}

/** The connection of a state, open or not, or the one that dropped before it (for settling its writes). */
export function connectionOf(state: ConnectionState): NetworkConnection | null {
  switch (state.kind) {
    case 'pairing':
    case 'connecting':
    case 'open':
    case 'dropped':
      return state.conn;
    case 'scheduled':
    case 'queued':
    case 'opening':
      return state.previous;
    case 'ended':
      return null;
  }
}

/**
 * any live state → ended: its timers stop, its slot goes back, its QR waiters are failed with `waiterError`
 * and its connection is closed quietly. Answers the state it left.
 */
export function toEnded(
  live: Live<Exclude<ConnectionState, Ended>>,
  waiterError: () => Error,
): Exclude<ConnectionState, Ended> {
  const from = live.state;
  live.generation = -1;
  move(live, { kind: 'ended', was: from.kind === 'pairing' ? 'pairing' : 'session', last: connectionOf(from) });
  if (from.kind === 'pairing' || from.kind === 'scheduled') from.timer.cancel();
  if (from.kind === 'pairing') failQrWaiters(from, waiterError);
  if (from.kind === 'opening' || from.kind === 'connecting') from.slot?.release();
  try {
    connectionOf(from)?.close();
  } catch {
    // Closing a connection that is already gone is fine.
  }
  return from;
}

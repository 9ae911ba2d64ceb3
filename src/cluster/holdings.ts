/**
 * What the rest of the gateway asks of the cluster: whether this node holds a
 * device now, under which lease epoch, and fencing a write by that epoch
 * (docs/internals.md, Clusters). The dispatcher, the connection manager and the network
 * state ask this interface; nothing else reads leases.
 *
 * Owns: the interface, its errors, and the single-node implementation used
 * with SQLite (one process owns the store, so it holds every device, always,
 * at epoch 0, and fencing is a no-op).
 * Must never: import the features that ask it (they subscribe instead).
 */
import type { Db } from '../store/schema.js';

/** One lease as a key: a device under one epoch. */
export function leaseKey(deviceId: number, epoch: number): string {
  return `${deviceId}:${epoch}`;
}

/** A write for a device was refused: its lease moved to another node (or this one lost it). */
export class LeaseLostError extends Error {
  constructor(
    readonly deviceId: number,
    readonly epoch: number,
  ) {
    super(`device ${deviceId} is no longer held here under lease epoch ${epoch}`);
    this.name = 'LeaseLostError';
  }
}

/** No node can act for the device right now (its holder is down and nobody took it over yet). */
export class DeviceUnavailableError extends Error {
  constructor(readonly deviceId: number) {
    super(`device ${deviceId} is not held by a live node right now`);
    this.name = 'DeviceUnavailableError';
  }
}

/**
 * Why a device stopped being held here: `expired` when this node's own lease ran out before it could be
 * renewed (the store did not answer, or the process was paused); the node takes it back once the store
 * answers again, unless another node took it meanwhile. Absent: taken over, handed back or let go.
 */
export type LossCause = 'expired';

/** Told when this node starts or stops holding a device. */
export interface HoldingsListener {
  /** The device is held here from now on (connect it). */
  acquired?(deviceId: number, epoch: number): void;
  /**
   * The device is no longer held here: drop its connection at once, stop its lane. A promise
   * is waited for before the lease is handed to another node (a send under way finishes first).
   */
  lost?(deviceId: number, cause?: LossCause): void | Promise<void>;
  /** A device held here was changed through another node (its settings are read again). */
  changed?(deviceId: number): void;
  /** Held devices with messages waiting (accepted on another node, or found by the poll). */
  work?(deviceIds: readonly number[]): void;
}

export interface DeviceHoldings {
  /** This node's name (GATEWAY_SERVER_NAME). */
  readonly node: string;
  /** False with SQLite: one node holds everything and nothing else runs. */
  readonly clustered: boolean;
  /**
   * The lease epoch under which this node may act for the device now, or null: not held
   * here, or this node's own clock says its last renewed lease has run out.
   */
  epochOf(deviceId: number): number | null;
  /**
   * Inside a write's transaction: refuses it (LeaseLostError) unless the device's lease is
   * still this node's at `epoch`. On PostgreSQL the lease row stays share-locked until the
   * transaction ends, so a takeover cannot commit in between.
   */
  fence(db: Db, deviceId: number, epoch: number): Promise<void>;
  /**
   * The fence of many writes of one transaction at once (one statement on PostgreSQL): answers
   * the leases refused, as `leaseKey`s; each device refused is dropped here as a refused `fence`
   * drops it. The others are fenced for the rest of the transaction (a later `fence` of one of
   * them asks nothing more).
   */
  fenceAll(db: Db, leases: ReadonlyArray<{ readonly deviceId: number; readonly epoch: number }>): Promise<Set<string>>;
  /**
   * Takes the device for a pairing attempt here when no live node holds it; the epoch, or
   * null when another live node holds it.
   */
  claimForPairing(deviceId: number): Promise<number | null>;
  /** This node is done with the device (pairing ended without a session, logged out, deleted). */
  letGo(deviceId: number): void;
  /** A device's state changed (resumed, suspended): its holder, or any node, should look again. */
  deviceChanged(deviceId: number): void;
  subscribe(listener: HoldingsListener): () => void;
}

/** SQLite: this process is the only node and holds every device. */
export class SoleHoldings implements DeviceHoldings {
  readonly clustered = false;
  constructor(readonly node: string) {}
  epochOf(): number {
    return 0;
  }
  async fence(): Promise<void> {}
  async fenceAll(): Promise<Set<string>> {
    return new Set();
  }
  async claimForPairing(): Promise<number> {
    return 0;
  }
  letGo(): void {}
  deviceChanged(): void {}
  subscribe(): () => void {
    return () => undefined;
  }
}

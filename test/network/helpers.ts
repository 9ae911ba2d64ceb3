/**
 * Test helpers for the sandbox network: an event recorder with polling waits,
 * and a one-call pairing of a device. Not a test file itself.
 */
import type { MediaSource, Network, NetworkConnection, NetworkEvent } from '../../src/network/network.js';
import type { SandboxControl } from '../../src/network/sandbox-control.js';

export type SandboxNetwork = Network & { readonly sandbox: SandboxControl };

/** Polls until `probe` returns something other than undefined/false; fails after `timeoutMs`. */
export async function waitFor<T>(probe: () => T | undefined | false, timeoutMs = 2000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class Recorder {
  readonly events: NetworkEvent[] = [];
  readonly handler = (event: NetworkEvent): void => {
    this.events.push(event);
  };

  of<K extends NetworkEvent['type']>(type: K): Array<Extract<NetworkEvent, { type: K }>> {
    return this.events.filter((e): e is Extract<NetworkEvent, { type: K }> => e.type === type);
  }

  /** The n-th (0-based) event of this type that matches, waiting for it. */
  wait<K extends NetworkEvent['type']>(
    type: K,
    match: (e: Extract<NetworkEvent, { type: K }>) => boolean = () => true,
    nth = 0,
    timeoutMs = 2000,
  ): Promise<Extract<NetworkEvent, { type: K }>> {
    return waitFor(() => this.of(type).filter(match)[nth], timeoutMs, `event ${type} #${nth}`);
  }

  types(): string[] {
    return this.events.map((e) => e.type);
  }
}

export interface Paired {
  readonly connection: NetworkConnection;
  readonly recorder: Recorder;
  readonly session: string;
  readonly phone: string;
}

/** Pairs a new device from `phone`; `view` names whose view of the phones its traffic meets (none: the shared one). */
export async function pair(network: SandboxNetwork, deviceId: number, phone: string, view?: string): Promise<Paired> {
  const recorder = new Recorder();
  const connection = network.connect(
    { deviceId, session: null, ...(view === undefined ? {} : { view }) },
    recorder.handler,
  );
  const { qr } = await recorder.wait('qr');
  await network.sandbox.scan(qr, phone);
  const paired = await recorder.wait('paired');
  await recorder.wait('connected');
  return { connection, recorder, session: paired.session, phone };
}

/** Reconnects with a stored session and waits until `connected`. */
export async function reconnect(network: SandboxNetwork, deviceId: number, session: string): Promise<Paired> {
  const recorder = new Recorder();
  const connection = network.connect({ deviceId, session }, recorder.handler);
  const connected = await recorder.wait('connected');
  return { connection, recorder, session, phone: connected.phone };
}

export const MiB = 1024 * 1024;

/** Media as the seam carries it, over bytes in memory, in chunks of `chunkBytes`; counts its reads. */
export class BytesSource implements MediaSource {
  /** How many times it was opened, and how many bytes all reads have pulled. */
  opened = 0;
  pulled = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly chunkBytes = MiB,
    /** Fails the read after this many bytes (a store that went away). */
    private readonly failAfter = Infinity,
  ) {}

  get size(): number {
    return this.bytes.byteLength;
  }

  async *open(): AsyncIterable<Uint8Array> {
    this.opened += 1;
    for (let at = 0; at < this.bytes.byteLength; at += this.chunkBytes) {
      if (at >= this.failAfter) throw new Error('the media could not be read');
      const chunk = this.bytes.subarray(at, at + this.chunkBytes);
      this.pulled += chunk.byteLength;
      yield chunk;
    }
  }
}

/** `total` bytes of a repeated pattern, produced as they are pulled (nothing held but one chunk). */
export class EndlessSource implements MediaSource {
  pulled = 0;
  private readonly chunk = new Uint8Array(MiB).map((_, i) => i & 0xff);

  constructor(readonly size: number) {}

  async *open(): AsyncIterable<Uint8Array> {
    for (let at = 0; at < this.size; at += this.chunk.byteLength) {
      const chunk = this.chunk.subarray(0, Math.min(this.chunk.byteLength, this.size - at));
      this.pulled += chunk.byteLength;
      yield chunk;
    }
  }
}

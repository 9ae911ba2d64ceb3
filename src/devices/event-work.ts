/**
 * One kind of network event handled beside the connection (incoming calls, contact changes): each event of that kind a
 * device's connection reports starts its handling at once, the connection never waiting for it; a failure goes to
 * `onFailure` (to be logged). `close` stops listening and waits for the handling still running.
 *
 * Owns: listening and the handling in flight. Must never: throw into, or hold up, the connection's event path.
 */
import type { NetworkEvent } from '../network/network.js';
import type { DeviceNetworkListener } from './connections.js';

export type NetworkEventOf<T extends NetworkEvent['type']> = Extract<NetworkEvent, { type: T }>;

export class NetworkEventWork<T extends NetworkEvent['type']> {
  private unsubscribe: (() => void) | null = null;
  private readonly handling = new Set<Promise<void>>();

  constructor(
    private readonly type: T,
    private readonly handle: (deviceId: number, event: NetworkEventOf<T>) => Promise<void>,
    private readonly onFailure: (error: unknown, deviceId: number, event: NetworkEventOf<T>) => void,
  ) {}

  start(connections: { onEvent(listener: DeviceNetworkListener): () => void }): void {
    this.unsubscribe ??= connections.onEvent((deviceId, event) => {
      if (!this.isOfType(event)) return;
      const work = this.handle(deviceId, event).catch((error: unknown) => this.onFailure(error, deviceId, event));
      this.handling.add(work);
      void work.finally(() => this.handling.delete(work));
    });
  }

  /** Stops listening and waits for the events being handled. */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    while (this.handling.size > 0) await Promise.allSettled([...this.handling]);
  }

  private isOfType(event: NetworkEvent): event is NetworkEventOf<T> {
    return event.type === this.type;
  }
}

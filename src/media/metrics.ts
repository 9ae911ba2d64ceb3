/**
 * The chunk store's gauge on /metrics: `gateway_media_stored_bytes`, the bytes
 * of media the store holds (all nodes' on PostgreSQL).
 *
 * Owns: the gauge and how often it reads the store: a sum over an index (one
 * entry per MiB of media), read at most once per CACHE_MS however often it is
 * scraped.
 * Must never: fail or hold up a scrape because the store is slow or down (the
 * last value read is kept).
 */
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import { mediaRepository } from './repository.js';

const CACHE_MS = 2_000;

export function installMediaMetrics(registry: Registry, store: Store, clock: Clock): void {
  let last: { at: number; bytes: number } | null = null;
  new Gauge({
    name: 'gateway_media_stored_bytes',
    help: 'Bytes of media held in the store: media of queued messages (deleted when the message ends)',
    registers: [registry],
    async collect() {
      const now = clock.now();
      if (last === null || now - last.at >= CACHE_MS) {
        const bytes = await mediaRepository.bytesHeld(store.db).catch(() => last?.bytes);
        if (bytes !== undefined) last = { at: now, bytes };
      }
      if (last !== null) this.set(last.bytes);
    },
  });
}

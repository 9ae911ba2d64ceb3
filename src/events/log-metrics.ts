/**
 * The event streams on /metrics (docs/events.md, Slow consumers).
 *
 * Owns: `gateway_event_stream_consumers` (SSE and WebSocket consumers open now),
 * `gateway_event_stream_slow_closed_total` (closed for being too slow since start) and
 * `gateway_event_stream_peak_buffered_bytes` (the most one consumer had waiting, the bound at work).
 * Must never: label by consumer, token or filter.
 */
import { Gauge, type Registry } from 'prom-client';
import type { LogStreams } from './log-streams.js';

export function installLogStreamMetrics(registry: Registry, streams: LogStreams): void {
  new Gauge({
    name: 'gateway_event_stream_consumers',
    help: 'Event stream consumers (SSE and WebSocket) open on this node',
    registers: [registry],
    collect() {
      this.set(streams.size);
    },
  });
  new Gauge({
    name: 'gateway_event_stream_slow_closed_total',
    help: 'Event stream consumers closed for being too slow since this node started',
    registers: [registry],
    collect() {
      this.set(streams.closedSlow);
    },
  });
  new Gauge({
    name: 'gateway_event_stream_peak_buffered_bytes',
    help: 'The most bytes one event stream consumer had waiting in its socket on this node',
    registers: [registry],
    collect() {
      this.set(streams.peakBuffered);
    },
  });
}

/**
 * Broker gauges on /metrics (docs/brokers.md): each configured broker's state, backlog and events published,
 * read when scraped.
 *
 * Owns: the metric names and labels. Must never: fail a scrape because the store is slow or down (the backlog is
 * then left out).
 */
import { Gauge, type Registry } from 'prom-client';
import type { Brokers } from './index.js';

export function installBrokerMetrics(registry: Registry, brokers: Brokers): void {
  if (brokers.drivers.length === 0) return;
  let snapshot: ReturnType<Brokers['statuses']> | null = null;
  // One read of the statuses serves the gauges of one scrape (they are collected together).
  const statuses = () => {
    snapshot ??= brokers.statuses().finally(() => setImmediate(() => (snapshot = null)));
    return snapshot;
  };
  new Gauge({
    name: 'gateway_broker_up',
    help: 'Whether this process publishes to the broker now (1), or it is down, starting or standing by (0)',
    labelNames: ['broker', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await statuses()) this.set({ broker: s.broker, state: s.state }, s.state === 'up' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gateway_broker_backlog_events',
    help: 'Events logged and not yet confirmed by the broker',
    labelNames: ['broker'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await statuses()) if (s.backlog !== null) this.set({ broker: s.broker }, s.backlog);
    },
  });
  new Gauge({
    name: 'gateway_broker_published_events',
    help: 'Events this process published to the broker (confirmed) since it started',
    labelNames: ['broker'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await statuses()) this.set({ broker: s.broker }, s.published);
    },
  });
}

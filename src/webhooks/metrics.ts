/**
 * Webhook deliveries on /metrics (docs/webhooks.md, Backlog and state): how many wait to be made, gateway-wide, for
 * the operator (`GET /gateway` shows each account its own webhooks instead).
 *
 * Owns: `gateway_webhook_backlog_deliveries`. Must never: label by account, webhook or URL; fail a scrape because
 * the store is slow or down (the gauge is then left out).
 */
import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../store/schema.js';
import { BACKLOG_CAP, pendingDeliveries } from './states.js';

export function installWebhookMetrics(registry: Registry, db: Db): void {
  new Gauge({
    name: 'gateway_webhook_backlog_deliveries',
    help: `Webhook deliveries not yet made (due, or waiting for a retry), every destination of every account; counted up to ${BACKLOG_CAP}`,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        this.set(await pendingDeliveries(db));
      } catch {
        // The store did not answer: no value rather than a failed scrape.
      }
    },
  });
}

/**
 * Prometheus metrics of the HTTP layer.
 *
 * Owns: the registry every feature adds its metrics to, and request counts
 * and durations labelled by route pattern (never by raw URL, which would
 * explode the label space); the process's own metrics (CPU, memory, event
 * loop, GC), collected once per process and served with each gateway's.
 * Must never: collect the process's metrics per gateway (their GC observer is
 * never let go, and it held a closed gateway's registry, and through its
 * metrics the whole gateway, for as long as the process ran).
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

let processMetrics: Registry | undefined;

/** The process's metrics, one registry a process however many gateways it builds. */
function processRegistry(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics, prefix: 'gateway_' });
  }
  return processMetrics;
}

/** A gateway's own registry: what it adds is dropped with it. */
export function createMetricsRegistry(): Registry {
  processRegistry();
  return new Registry();
}

/** The Prometheus text of the process's metrics and the gateway's `registry`. */
export function metricsText(registry: Registry): Promise<string> {
  return Registry.merge([processRegistry(), registry]).metrics();
}

export function installHttpMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time to answer HTTP requests',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [registry],
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unknown';
    requests.inc({ method: request.method, route, status: reply.statusCode });
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });
}

/**
 * Liveness, readiness and metrics (docs/internals.md, Running and operating).
 *
 * Owns: `/healthz` (the process answers), `/readyz` (the store answers within
 * seconds and, after a failed write, can write again) and
 * `/metrics` (Prometheus text, token required).
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Store } from '../store/store.js';
import { STORE_RETRY_AFTER_S } from '../store/faults.js';
import { ApiError } from '../errors.js';
import { metricsText } from './metrics.js';
import { errorResponses, MessageEnvelope as Ok } from './schemas.js';

export async function healthRoutes(app: FastifyInstance, options: { store: Store; metrics: Registry }) {
  app.get(
    '/healthz',
    {
      schema: { tags: ['Operations'], summary: 'The process is up', security: [], response: { 200: Ok } },
      config: { public: true },
    },
    async () => ({ code: 200, status: 200, message: 'OK' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'The store is reachable',
        security: [],
        response: { 200: Ok, ...errorResponses(503) },
      },
      config: { public: true },
    },
    async () => {
      const readiness = await options.store.readiness();
      if (!readiness.ready) {
        throw new ApiError('NOT_READY', {
          error: readiness.reason,
          headers: { 'retry-after': String(STORE_RETRY_AFTER_S) },
        });
      }
      return { code: 200, status: 200, message: 'Ready' };
    },
  );
  app.get(
    '/metrics',
    { schema: { tags: ['Operations'], summary: 'Prometheus metrics', produces: ['text/plain'] } },
    async (_request, reply) => {
      reply.type(options.metrics.contentType);
      return metricsText(options.metrics);
    },
  );
}

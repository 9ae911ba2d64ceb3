/**
 * The twin status field of every JSON answer (docs/internals.md, Whatspie compatibility).
 *
 * Owns: adding `status` to a body that carries only `code`, and `code` to one that carries only `status`, so every
 * route answers both with the same integer without each handler repeating it; `ok`, the envelope of a 200 answer.
 *
 * Must never: change any other field, or touch bodies that are not plain envelope objects (strings, buffers, streams,
 * arrays, the Prometheus text).
 */
import type { FastifyInstance } from 'fastify';

function isEnvelope(payload: unknown): payload is Record<string, unknown> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return false;
  const prototype = Object.getPrototypeOf(payload) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Puts `code` and `status` first, both set, when a body has exactly one of them as an integer. */
export function withTwinStatus(payload: unknown): unknown {
  if (!isEnvelope(payload)) return payload;
  const { code, status } = payload;
  if (Number.isInteger(code) && status === undefined) return { code, status: code, ...payload };
  if (Number.isInteger(status) && code === undefined) return { code: status, status, ...payload };
  return payload;
}

export function installTwinStatus(app: FastifyInstance): void {
  app.addHook('preSerialization', async (_request, _reply, payload) => withTwinStatus(payload));
}

/** The envelope of a 200 answer: `message` says what was done, `data` is what it answers. */
export function ok<T>(message: string, data: T): { code: 200; status: 200; message: string; data: T } {
  return { code: 200, status: 200, message, data };
}

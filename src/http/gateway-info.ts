/**
 * `GET /gateway`: what a signed-in client needs to know about the gateway it
 * talks to (DECISIONS 14: the dashboard's banner names the network and node).
 *
 * Owns: the shape of that answer.
 * Must never: reveal configuration beyond it (no store URL, no paths, no keys).
 */
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { CodeEnvelope, errorResponses } from './schemas.js';

export interface GatewayInfoOptions {
  /** `sandbox`, `sandbox+ws://...` or `whatsapp` (config.network). */
  readonly network: string;
  /** Whether the sandbox control API answers on this gateway. */
  readonly sandboxControl: boolean;
  readonly serverName: string;
}

const GatewayInfo = Type.Object(
  {
    network: Type.Union([Type.Literal('sandbox'), Type.Literal('whatsapp')], {
      description: 'The messaging network devices connect to',
    }),
    sandbox_control: Type.Boolean({ description: 'Whether the sandbox control API (/sandbox/...) answers here' }),
    server: Type.Object({ name: Type.String({ description: 'This node (GATEWAY_SERVER_NAME)' }) }),
    version: Type.String({ description: 'The gateway’s version' }),
  },
  { title: 'Gateway' },
);

/** The version in package.json, read once (src/http and dist/http both sit two levels below it). */
function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const gatewayInfoRoutes: FastifyPluginAsyncTypebox<GatewayInfoOptions> = async (app, options) => {
  const data = {
    network: options.network === 'whatsapp' ? ('whatsapp' as const) : ('sandbox' as const),
    sandbox_control: options.sandboxControl,
    server: { name: options.serverName },
    version: packageVersion(),
  };
  app.get(
    '/gateway',
    {
      schema: {
        tags: ['Operations'],
        summary: 'The network and node this gateway runs',
        response: { 200: CodeEnvelope(GatewayInfo), ...errorResponses(401) },
      },
    },
    async () => ({ code: 200, status: 200, message: 'OK', data }),
  );
};

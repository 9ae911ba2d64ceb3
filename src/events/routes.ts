/**
 * HTTP routes of a device's webhook (docs/internals.md, Webhooks): the delivery log, a manual
 * retry, and rotating the signing secret. Device routes, so device envelopes
 * (`{status, message, data}`, docs/internals.md, Answers and errors).
 *
 * Owns: paths, schemas and status codes. Rules live in the service.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { DeviceEnvelope, IdParams, NoFieldsBody, PageMeta, PageQuery, errorResponses } from '../http/schemas.js';
import { DeviceSchema, presentDevice } from '../devices/present.js';
import { DeliveryFilterQuery, DeliverySchema, deliveriesPage } from './present.js';
import type { WebhooksService } from './service.js';
import type { DeviceNetworks } from '../devices/networks.js';

export interface WebhookRoutesOptions {
  readonly webhooks: WebhooksService;
  readonly serverName: string;
  /** Whether a node is up (the device's `server.status`); default: only this one. */
  readonly serverUp?: (name: string) => boolean;
  /** Which network a device is on (its `network`). */
  readonly networks: Pick<DeviceNetworks, 'ofDevice'>;
}

const DeliveryParams = Type.Object({
  id: IdParams.properties.id,
  delivery_id: Type.String({ minLength: 1, maxLength: 64, description: 'The event id (`evt_...`)' }),
});

const DeliveriesQuery = Type.Composite([PageQuery, DeliveryFilterQuery]);

const tags = ['Webhooks'];

export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (
  app,
  { webhooks, serverName, serverUp, networks },
) => {
  app.get(
    '/devices/:id/webhook-deliveries',
    {
      schema: {
        tags,
        summary: 'The device’s webhook deliveries with their attempts, newest first',
        querystring: DeliveriesQuery,
        params: IdParams,
        response: {
          200: DeviceEnvelope(Type.Array(DeliverySchema), { meta: PageMeta }),
          ...errorResponses(400, 401, 404),
        },
      },
      config: { fieldErrors: { id: 'DEVICE_NOT_FOUND' } },
    },
    async (request) =>
      deliveriesPage(request.query, await webhooks.deliveries(accountOf(request), request.params.id, request.query)),
  );

  app.post(
    '/devices/:id/webhook-deliveries/:delivery_id/retry',
    {
      schema: {
        tags,
        summary: 'Send a delivery again now (whatever its state, a failed one too)',
        description:
          'The delivery becomes due at once and is attempted in the background; follow it in the delivery log. A delivery that is being attempted right now finishes that attempt instead.',
        params: DeliveryParams,
        body: NoFieldsBody,
        response: { 200: DeviceEnvelope(DeliverySchema), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: { id: 'DEVICE_NOT_FOUND', delivery_id: 'DELIVERY_NOT_FOUND' } },
    },
    async (request) => {
      const { id, delivery_id } = request.params;
      const data = await webhooks.retry(accountOf(request), id, delivery_id);
      return { code: 200, status: 200, message: 'Delivery retry scheduled', data };
    },
  );

  app.post(
    '/devices/:id/webhook-secret',
    {
      schema: {
        tags,
        summary: 'Rotate the webhook signing secret (the device is returned with the new one)',
        description: 'Every attempt from now on, retries of older events included, is signed with the new secret only.',
        params: IdParams,
        body: NoFieldsBody,
        response: { 200: DeviceEnvelope(DeviceSchema), ...errorResponses(401, 404) },
      },
      config: { fieldErrors: { id: 'DEVICE_NOT_FOUND' } },
    },
    async (request) => {
      const row = await webhooks.rotateSecret(accountOf(request), request.params.id);
      return {
        code: 200,
        status: 200,
        message: 'Webhook secret rotated',
        data: presentDevice(row, await networks.ofDevice(row), serverName, serverUp),
      };
    },
  );
};

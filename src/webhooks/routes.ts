/**
 * HTTP routes of the account's webhooks (DECISIONS 17; docs/webhooks.md, Several webhooks): create, list,
 * read, change, delete, rotate the secret, the delivery log and a manual retry.
 *
 * Owns: paths, schemas and status codes. Rules live in the service (service.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { CodeEnvelope, NoFieldsBody, PageMeta, PageQuery, errorResponses } from '../http/schemas.js';
import { DeliveryFilterQuery, DeliverySchema, deliveriesPage } from '../events/present.js';
import { CreateWebhookBody, UpdateWebhookBody, WebhookSchema, presentWebhook } from './present.js';
import type { AccountWebhooks } from './service.js';

const WebhookParams = Type.Object({
  id: Type.String({ pattern: '^wh_[0-9A-Za-z]{1,64}$', description: 'The webhook id (`wh_...`)' }),
});

const DeliveryParams = Type.Object({
  id: WebhookParams.properties.id,
  delivery_id: Type.String({ minLength: 1, maxLength: 64, description: 'The delivery id (`dlv_...`)' }),
});

const DeliveriesQuery = Type.Composite([PageQuery, DeliveryFilterQuery]);

const tags = ['Webhooks'];
const notFound = { id: 'WEBHOOK_NOT_FOUND' } as const;

export const accountWebhookRoutes: FastifyPluginAsyncTypebox<{ webhooks: AccountWebhooks }> = async (
  app,
  { webhooks },
) => {
  app.post(
    '/webhooks',
    {
      schema: {
        tags,
        summary: 'Create a webhook of the account (its secret is in this answer only)',
        description:
          'Deliveries of the account’s events go to `url`, filtered by `devices` and `events`, signed with the webhook’s own secret, with the custom `headers`. At most 20 webhooks per account.',
        body: CreateWebhookBody,
        response: { 201: CodeEnvelope(WebhookSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const row = await webhooks.create(accountOf(request), request.body);
      reply.code(201);
      return { code: 201, status: 201, message: 'Webhook created', data: presentWebhook(row, true) };
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        tags,
        summary: 'The account’s webhooks, oldest first',
        response: { 200: CodeEnvelope(Type.Array(WebhookSchema)), ...errorResponses(401) },
      },
    },
    async (request) => {
      const rows = await webhooks.list(accountOf(request));
      return {
        code: 200,
        status: 200,
        message: 'Webhooks retrieved successfully',
        data: rows.map((row) => presentWebhook(row)),
      };
    },
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'One webhook',
        params: WebhookParams,
        response: { 200: CodeEnvelope(WebhookSchema), ...errorResponses(401, 404) },
      },
      config: { fieldErrors: notFound },
    },
    async (request) => {
      const row = await webhooks.get(accountOf(request), request.params.id);
      return { code: 200, status: 200, message: 'Webhook retrieved successfully', data: presentWebhook(row) };
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'Change a webhook (only the fields given)',
        description: '`devices: null` and `events: ["*"]` set back to every device and every type.',
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: CodeEnvelope(WebhookSchema), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: notFound },
    },
    async (request) => {
      const row = await webhooks.update(accountOf(request), request.params.id, request.body);
      return { code: 200, status: 200, message: 'Webhook updated', data: presentWebhook(row) };
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'Delete a webhook with its deliveries',
        params: WebhookParams,
        response: { 200: CodeEnvelope(WebhookSchema), ...errorResponses(401, 404) },
      },
      config: { fieldErrors: notFound },
    },
    async (request) => {
      const row = await webhooks.delete(accountOf(request), request.params.id);
      return { code: 200, status: 200, message: 'Webhook deleted', data: presentWebhook(row) };
    },
  );

  app.post(
    '/webhooks/:id/secret',
    {
      schema: {
        tags,
        summary: 'Rotate the webhook’s signing secret (the new one is in this answer only)',
        description: 'The replaced secret keeps signing beside the new one for 24 hours.',
        params: WebhookParams,
        body: NoFieldsBody,
        response: { 200: CodeEnvelope(WebhookSchema), ...errorResponses(401, 404) },
      },
      config: { fieldErrors: notFound },
    },
    async (request) => {
      const row = await webhooks.rotateSecret(accountOf(request), request.params.id);
      return { code: 200, status: 200, message: 'Webhook secret rotated', data: presentWebhook(row, true) };
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: 'The webhook’s deliveries with their attempts, newest first',
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: {
          200: CodeEnvelope(Type.Array(DeliverySchema), { meta: PageMeta }),
          ...errorResponses(400, 401, 404),
        },
      },
      config: { fieldErrors: notFound },
    },
    async (request) =>
      deliveriesPage(request.query, await webhooks.deliveries(accountOf(request), request.params.id, request.query)),
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery_id/retry',
    {
      schema: {
        tags,
        summary: 'Send a delivery again now (whatever its state, a failed one too)',
        params: DeliveryParams,
        body: NoFieldsBody,
        response: { 200: CodeEnvelope(DeliverySchema), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: { ...notFound, delivery_id: 'DELIVERY_NOT_FOUND' } },
    },
    async (request) => {
      const { id, delivery_id } = request.params;
      const data = await webhooks.retry(accountOf(request), id, delivery_id);
      return { code: 200, status: 200, message: 'Delivery retry scheduled', data };
    },
  );
};

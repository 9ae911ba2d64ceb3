/**
 * Webhook secret rotation with an overlap (issue 10, item 16): after
 * `POST /devices/{id}/webhook-secret`, deliveries are signed with the new
 * secret and, for 24 hours, also with the one it replaced (Standard Webhooks
 * allows several signatures in `webhook-signature`), so a receiver still on
 * the old secret keeps verifying until it is updated.
 *
 * - `webhook_secret_previous`: the secret replaced by the last rotation.
 *   Secret like `webhook_secret`: never returned, never logged.
 * - `webhook_secret_previous_until`: epoch ms after which it signs no more.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('devices').addColumn('webhook_secret_previous', 'text').execute();
  await db.schema.alterTable('devices').addColumn('webhook_secret_previous_until', 'bigint').execute();
}

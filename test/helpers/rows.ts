/**
 * Rows written straight into the store by tests that need a state the API would take long to reach (many devices,
 * an old message): every column with a plain default, the test naming only what it is about.
 * Not a test file itself.
 */
import type { Insertable } from 'kysely';
import type { DevicesTable, MessagesTable } from '../../src/store/schema.js';

/** An active device of `accountId`, unpaired unless the overrides say otherwise, with no webhook. */
export function deviceRow(
  accountId: number,
  overrides: Partial<Insertable<DevicesTable>> = {},
): Insertable<DevicesTable> {
  const now = Date.now();
  return {
    account_id: accountId,
    name: 'device',
    phone: null,
    expected_phone: null,
    package_code: 'FREE',
    status: 'ACTIVE',
    paired_status: 'UNPAIRED',
    connected: 0,
    webhook_url: null,
    webhook_secret: 'whsec_x',
    quota_limit: -1,
    quote_used: 0,
    send_interval_ms: null,
    server_name: null,
    network_session: null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
    ...overrides,
  };
}

/** An outgoing pending text message of `deviceId`, created at `created_at` (now unless given). */
export function messageRow(
  id: string,
  accountId: number,
  deviceId: number,
  overrides: Partial<Insertable<MessagesTable>> = {},
): Insertable<MessagesTable> & { id: string } {
  const createdAt = overrides.created_at ?? Date.now();
  return {
    id,
    account_id: accountId,
    device_id: deviceId,
    direction: 'outgoing',
    type: 'chat',
    device_phone: '6281700000001',
    receiver: '6281799999999',
    sender: null,
    message: 'hello',
    file_url: null,
    params: '{}',
    simulate_typing: 0,
    status: 'pending',
    failed_reason: null,
    attempts: 0,
    next_attempt_at: createdAt,
    created_at: createdAt,
    sent_at: null,
    delivered_at: null,
    read_at: null,
    failed_at: null,
    ...overrides,
  };
}

/**
 * Device management: create, list, get, change, delete (spec 4.1-4.3,
 * docs/internals.md, Devices and pairing; Quota).
 *
 * Owns: the device limit (exact under concurrency: checked under the
 * account's row lock), package codes, phone and webhook URL rules, and what
 * deleting means (the connection is released, the row is kept so message
 * history stays queryable).
 * Must never: know about HTTP or write SQL.
 */
import { WEBHOOK_FORMATS, isWebhookFormat } from '../events/formats/index.js';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import { isPhoneNumber } from '../shapes.js';
import type { Store } from '../store/store.js';
import { accountsRepository } from '../accounts/repository.js';
import { findPackage } from './packages.js';
import { networkStateRepository } from './network-state.js';
import { devicesRepository, type DeviceRow } from './repository.js';
import { QUEUE_END_BATCH, REASON_DELETED, endQueueBatch, endQueueRest, type QueueEnd } from '../messages/end-queue.js';
import { cleanupRepository } from '../store/cleanup-repository.js';
import { clusterRepository } from '../cluster/repository.js';

/** What the device service needs from whatever holds live network connections. */
export interface DeviceConnections {
  /** Ends the device's connection; with `logout`, also its session on the network. */
  release(deviceId: number, options: { logout: boolean }): Promise<void>;
  /** A device made active again: reconnect it from its stored session, if it has one. */
  resume(deviceId: number): void;
}

/**
 * Outside the server (the CLI) no connection is held here; the running
 * gateway sees the change in the store (the dispatcher's send-time guard
 * reads the device's state; see src/dispatch/dispatcher.ts).
 */
export const noConnections: DeviceConnections = { release: async () => undefined, resume: () => undefined };

export interface CreateDeviceInput {
  readonly package: string;
  readonly name: string;
  readonly phone?: string | null;
}

export interface UpdateDeviceInput {
  readonly name?: string;
  readonly webhook_url?: string | null;
  readonly webhook_format?: string;
  readonly webhook_reply?: boolean;
  readonly send_interval_ms?: number | null;
  readonly reject_calls?: boolean;
  readonly reject_calls_message?: string | null;
}

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function isWebhookUrl(value: string): boolean {
  if (value.length > 2048) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

export class DevicesService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly connections: () => DeviceConnections = () => noConnections,
    /** Told after a device's settings change (the dispatcher re-reads its send interval). */
    private readonly onChanged: (deviceId: number) => void = () => undefined,
    /** Why deliveries to a webhook URL would always be refused (see outbound/destination-check.ts), or null. */
    private readonly webhookUrlProblem: (url: string) => Promise<string | null> = async () => null,
  ) {}

  async create(accountId: number, input: CreateDeviceInput): Promise<DeviceRow> {
    const plan = findPackage(input.package);
    if (plan === undefined) throw new ApiError('INVALID_PACKAGE', { error: `package must be one of the plan codes` });
    const phone = input.phone ?? null;
    if (phone !== null && !isPhoneNumber(phone))
      throw new ApiError('INVALID_PHONE', { errors: { phone: ['digits only, country code first, no +'] } });
    return this.store.db.transaction().execute(async (trx) => {
      const account = await accountsRepository.lockForUpdate(trx, accountId);
      if (account === undefined) throw new ApiError('UNAUTHORIZED');
      const count = await devicesRepository.countActive(trx, accountId);
      if (count >= account.max_devices) {
        throw new ApiError('DEVICE_LIMIT', { error: `this account may have at most ${account.max_devices} devices` });
      }
      const now = this.clock.now();
      return devicesRepository.insert(trx, {
        account_id: accountId,
        name: input.name,
        // docs/internals.md, Devices and pairing: a number given at creation is the device's number from now on (only it may pair).
        phone,
        expected_phone: phone,
        package_code: plan.code,
        status: 'ACTIVE',
        paired_status: 'UNPAIRED',
        connected: 0,
        webhook_url: null,
        webhook_secret: newWebhookSecret(),
        quota_limit: plan.messages,
        quote_used: 0,
        send_interval_ms: null,
        server_name: null,
        network_session: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      });
    });
  }

  async list(accountId: number, page: number, perPage: number): Promise<{ rows: DeviceRow[]; total: number }> {
    const [rows, total] = await Promise.all([
      devicesRepository.page(this.store.db, accountId, perPage, (page - 1) * perPage),
      devicesRepository.countActive(this.store.db, accountId),
    ]);
    return { rows, total };
  }

  async get(accountId: number, id: number): Promise<DeviceRow> {
    const row = await devicesRepository.find(this.store.db, accountId, id);
    if (row === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    return row;
  }

  /** The device if it exists and is not deleted (no error). */
  find(accountId: number, id: number): Promise<DeviceRow | undefined> {
    return devicesRepository.find(this.store.db, accountId, id);
  }

  async update(accountId: number, id: number, input: UpdateDeviceInput): Promise<DeviceRow> {
    const changes: Partial<DeviceRow> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.webhook_url !== undefined) {
      if (input.webhook_url !== null && !isWebhookUrl(input.webhook_url)) {
        throw new ApiError('VALIDATION_FAILED', { errors: { webhook_url: ['must be an absolute http(s) URL'] } });
      }
      const problem = input.webhook_url === null ? null : await this.webhookUrlProblem(input.webhook_url);
      if (problem !== null) throw new ApiError('VALIDATION_FAILED', { errors: { webhook_url: [problem] } });
      changes.webhook_url = input.webhook_url;
    }
    // The route's schema names the formats; checked here too for callers other than the route.
    if (input.webhook_format !== undefined) {
      if (!isWebhookFormat(input.webhook_format)) {
        throw new ApiError('VALIDATION_FAILED', {
          errors: { webhook_format: [`must be one of: ${WEBHOOK_FORMATS.join(', ')}`] },
        });
      }
      changes.webhook_format = input.webhook_format;
    }
    if (input.webhook_reply !== undefined) changes.webhook_reply = input.webhook_reply ? 1 : 0;
    if (input.send_interval_ms !== undefined) changes.send_interval_ms = input.send_interval_ms;
    if (input.reject_calls !== undefined) changes.reject_calls = input.reject_calls ? 1 : 0;
    // An empty message is none: nothing is sent after a rejection.
    if (input.reject_calls_message !== undefined) {
      changes.reject_calls_message = input.reject_calls_message === '' ? null : input.reject_calls_message;
    }
    changes.updated_at = this.clock.now();
    const row = await devicesRepository.update(this.store.db, accountId, id, changes);
    if (row === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    this.onChanged(id);
    return row;
  }

  /** Administrative state (operators, through the CLI): a SUSPENDED device cannot send or pair. */
  async setStatus(id: number, status: 'ACTIVE' | 'SUSPENDED'): Promise<DeviceRow> {
    const existing = await devicesRepository.findById(this.store.db, id);
    if (existing === undefined || existing.deleted_at !== null) throw new ApiError('DEVICE_NOT_FOUND');
    // The state first, then the connection: nobody sees a suspended device as merely offline.
    const row = await devicesRepository.update(this.store.db, existing.account_id, id, {
      status,
      updated_at: this.clock.now(),
    });
    if (row === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    this.onChanged(id);
    if (status === 'SUSPENDED') await this.connections().release(id, { logout: false });
    else if (row.paired_status === 'PAIRED') this.connections().resume(id);
    return (await devicesRepository.findById(this.store.db, id)) ?? row;
  }

  /**
   * A device's package (operators, through the CLI; never the API). The quota
   * is recomputed from the new plan: its allowance becomes the plan's, and the
   * messages already used keep counting against it (`quote_available` is the
   * new allowance minus `quote_used`, never below 0), unless `resetUsage`
   * starts the count again from 0. Effective for the next send at once, since
   * every acceptance reads the quota under its row lock.
   */
  async setPackage(id: number, code: string, { resetUsage = false } = {}): Promise<DeviceRow> {
    const plan = findPackage(code);
    if (plan === undefined) throw new ApiError('INVALID_PACKAGE');
    const existing = await devicesRepository.findById(this.store.db, id);
    if (existing === undefined || existing.deleted_at !== null) throw new ApiError('DEVICE_NOT_FOUND');
    const row = await devicesRepository.update(this.store.db, existing.account_id, id, {
      package_code: plan.code,
      quota_limit: plan.messages,
      ...(resetUsage ? { quote_used: 0 } : {}),
      updated_at: this.clock.now(),
    });
    if (row === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    this.onChanged(id);
    return row;
  }

  /**
   * Deleting logs the device out of the network and keeps its row (message
   * history stays queryable). Its queued messages end `failed` (`device
   * deleted`, quota given back) and its pending webhook deliveries stop, in
   * the same transaction as the deletion as far as the first batch goes.
   */
  async delete(accountId: number, id: number): Promise<DeviceRow> {
    const existing = await this.get(accountId, id);
    const now = this.clock.now();
    // No events: a deleted device has no webhook to announce anything to.
    const end: QueueEnd = { device: existing, reason: REASON_DELETED, announce: false };
    const deleted = await this.store.db.transaction().execute(async (trx) => {
      // First: a receipt being recorded for the device (a webhook event with it) commits before this goes on.
      await clusterRepository.endLease(trx, id);
      const row = await devicesRepository.update(trx, accountId, id, {
        deleted_at: now,
        updated_at: now,
        connected: 0,
        paired_status: 'UNPAIRED',
        network_session: null,
        network: null,
      });
      if (row === undefined) return undefined;
      // The network's stored state of the session goes with the device, even when it was offline (docs/internals.md, WhatsApp and sandbox accounts).
      if (existing.network_session !== null) await networkStateRepository.discard(trx, existing.network_session);
      const first = await endQueueBatch(trx, end, now);
      await cleanupRepository.stopPendingDeliveries(trx, id, now);
      return { row, first };
    });
    if (deleted === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    // Deleted first, then logged out of the network: a request meanwhile finds no device rather than an offline one.
    // The cluster hears of it only then, or its round could drop the connection before the logout.
    try {
      await this.connections().release(id, { logout: true });
    } finally {
      this.onChanged(id);
    }
    if (deleted.first === QUEUE_END_BATCH) await endQueueRest(this.store.db, end, this.clock);
    return deleted.row;
  }
}

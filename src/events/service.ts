/**
 * The webhook API of a device (docs/internals.md, Webhooks): its delivery log, sending a
 * delivery again, and rotating its signing secret.
 *
 * Owns: who may see and retry what (a device of the caller's account; another
 * account's device is "not found" exactly like a missing one), and what a
 * retry and a rotation mean: a retry makes the delivery due now whatever its
 * state; a rotation takes effect for every attempt from then on, retries of
 * older events included, and the replaced secret keeps signing beside the new
 * one for SECRET_OVERLAP_MS (24 h), so a receiver still on it keeps verifying
 * while it is updated.
 * Must never: know about HTTP or write SQL.
 */
import type { Clock } from '../clock.js';
import { newWebhookSecret } from '../devices/service.js';
import { devicesRepository, type DeviceRow } from '../devices/repository.js';
import { ApiError } from '../errors.js';
import type { Store } from '../store/store.js';
import { presentDelivery, type DeliveryJson } from './present.js';
import { webhookFormat } from './formats/index.js';
import { deliveryLogRepository, type AttemptRow } from './delivery-log-repository.js';

/** How long a replaced webhook secret keeps signing deliveries beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface DeliveryFilter {
  readonly page: number;
  readonly per_page: number;
  readonly status?: string;
  readonly type?: string;
}

export class WebhooksService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** Told when a delivery of this device became due now (the deliverer looks at once, even if its receiver is paused). */
    private readonly onDue: (deviceId: number) => void,
  ) {}

  async deliveries(
    accountId: number,
    deviceId: number,
    filter: DeliveryFilter,
  ): Promise<{ data: DeliveryJson[]; total: number }> {
    const device = await this.device(accountId, deviceId);
    const format = webhookFormat(device.webhook_format);
    const { db } = this.store;
    const where = { status: filter.status, type: filter.type };
    const [rows, total] = await Promise.all([
      deliveryLogRepository.page(
        db,
        accountId,
        { deviceId },
        {
          ...where,
          limit: filter.per_page,
          offset: (filter.page - 1) * filter.per_page,
        },
      ),
      deliveryLogRepository.count(db, accountId, { deviceId }, where),
    ]);
    const attempts = groupByEvent(
      await deliveryLogRepository.attemptsOf(
        db,
        rows.map((row) => row.id),
      ),
    );
    return { data: rows.map((row) => presentDelivery(row, attempts.get(row.id) ?? [], format)), total };
  }

  async retry(accountId: number, deviceId: number, deliveryId: string): Promise<DeliveryJson> {
    const device = await this.device(accountId, deviceId);
    const { db } = this.store;
    const existing = await deliveryLogRepository.find(db, accountId, { deviceId }, deliveryId);
    if (existing === undefined) throw new ApiError('DELIVERY_NOT_FOUND');
    if (device.webhook_url === null) {
      throw new ApiError('WEBHOOK_URL_NOT_SET', { error: 'set the device’s webhook_url before retrying a delivery' });
    }
    const row = await deliveryLogRepository.dueNow(db, accountId, { deviceId }, deliveryId, this.clock.now());
    if (row === undefined) throw new ApiError('DELIVERY_NOT_FOUND');
    this.onDue(deviceId);
    return presentDelivery(
      row,
      await deliveryLogRepository.attemptsOf(db, [row.id]),
      webhookFormat(device.webhook_format),
    );
  }

  async rotateSecret(accountId: number, deviceId: number): Promise<DeviceRow> {
    const now = this.clock.now();
    const row = await devicesRepository.rotateWebhookSecret(
      this.store.db,
      accountId,
      deviceId,
      newWebhookSecret(),
      now + SECRET_OVERLAP_MS,
      now,
    );
    if (row === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    return row;
  }

  private async device(accountId: number, deviceId: number): Promise<DeviceRow> {
    const device = await devicesRepository.find(this.store.db, accountId, deviceId);
    if (device === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    return device;
  }
}

export function groupByEvent(attempts: readonly AttemptRow[]): Map<string, AttemptRow[]> {
  const byEvent = new Map<string, AttemptRow[]>();
  for (const attempt of attempts) {
    const list = byEvent.get(attempt.event_id);
    if (list === undefined) byEvent.set(attempt.event_id, [attempt]);
    else list.push(attempt);
  }
  return byEvent;
}

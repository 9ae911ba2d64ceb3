/**
 * Webhooks as a resource of the account (DECISIONS 17; docs/webhooks.md, Several webhooks): create, list,
 * read, change, delete, rotate the secret, and each webhook's delivery log with a manual retry.
 *
 * Owns: the rules: at most MAX_WEBHOOKS per account (exact under concurrent creates: counted under the
 * account's row lock), at most MAX_HEADERS custom headers with names and values a request may carry and
 * none the delivery owns (Host, Content-Length, Transfer-Encoding, Connection, `webhook-*`), URLs checked
 * as a device's webhook_url is (an absolute http(s) URL the outbound guard would not always refuse), a
 * device filter that names only the account's own devices (else 404 `Device not found`, as every route
 * naming another account's device answers), and another account's webhook answering 404 like a missing
 * one. A change is seen by this process's next event at once (the destinations cache is told) and by
 * other processes within events/destinations.ts's TTL.
 * Must never: know about HTTP or write SQL; return a secret except from `create` and `rotateSecret`.
 */
import type { Clock } from '../clock.js';
import { newUlid } from '../ids.js';
import { ApiError } from '../errors.js';
import type { Store } from '../store/store.js';
import { isWebhookUrl, newWebhookSecret } from '../devices/service.js';
import { DEFAULT_WEBHOOK_FORMAT, WEBHOOK_FORMATS, isWebhookFormat, webhookFormat } from '../events/formats/index.js';
import { forgetAccountWebhooks } from '../events/destinations.js';
import { deliveryLogRepository } from '../events/delivery-log-repository.js';
import { presentDelivery, type DeliveryJson } from '../events/present.js';
import { groupByEvent, SECRET_OVERLAP_MS, type DeliveryFilter } from '../events/service.js';
import { accountsRepository } from '../accounts/repository.js';
import { webhooksRepository, type WebhookChanges, type WebhookRow } from './repository.js';

export const MAX_WEBHOOKS = 20;
export const MAX_HEADERS = 10;
export const MAX_HEADER_NAME = 64;
export const MAX_HEADER_VALUE = 1024;
/** Header names a delivery sets itself, or that belong to the connection. */
const RESERVED = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
/** An HTTP token (RFC 9110): what a header name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, spaces and tabs: what a header value may hold (no line breaks). */
const VALUE = /^[\x20-\x7e\t]*$/;

export interface WebhookInput {
  readonly url?: string;
  /** null (or absent at creation): every device of the account, present and future. */
  readonly devices?: readonly number[] | null;
  /** null, absent or `["*"]`: every event type. */
  readonly events?: readonly string[] | null;
  readonly format?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly enabled?: boolean;
}

export interface WebhooksOptions {
  readonly store: Store;
  readonly clock: Clock;
  /** Why deliveries to a URL would always be refused (outbound/destination-check.ts), or null. */
  readonly urlProblem: (url: string) => Promise<string | null>;
  /** A delivery of this webhook became due now (the deliverer looks at once, even if the receiver is paused). */
  readonly onDue: (webhookId: string) => void;
}

export class AccountWebhooks {
  constructor(private readonly options: WebhooksOptions) {}

  async create(accountId: number, input: WebhookInput & { readonly url: string }): Promise<WebhookRow> {
    const { store, clock } = this.options;
    const checked = await this.check(accountId, input);
    const now = clock.now();
    const row = await store.db.transaction().execute(async (trx) => {
      // The account's row lock makes the count and the insert one step: concurrent creates queue here.
      const account = await accountsRepository.lockForUpdate(trx, accountId);
      if (account === undefined) throw new ApiError('UNAUTHORIZED');
      if ((await webhooksRepository.count(trx, accountId)) >= MAX_WEBHOOKS) {
        throw new ApiError('WEBHOOK_LIMIT', { error: `an account has at most ${MAX_WEBHOOKS} webhooks` });
      }
      return webhooksRepository.insert(trx, {
        id: `wh_${newUlid()}`,
        account_id: accountId,
        url: input.url,
        devices: checked.devices === undefined || checked.devices === null ? null : JSON.stringify(checked.devices),
        events: checked.events === undefined || checked.events === null ? null : JSON.stringify(checked.events),
        format: input.format ?? DEFAULT_WEBHOOK_FORMAT,
        headers: JSON.stringify(checked.headers ?? {}),
        enabled: input.enabled === false ? 0 : 1,
        secret: newWebhookSecret(),
        secret_previous: null,
        secret_previous_until: null,
        created_at: now,
        updated_at: now,
      });
    });
    forgetAccountWebhooks(store.db, accountId);
    return row;
  }

  list(accountId: number): Promise<WebhookRow[]> {
    return webhooksRepository.list(this.options.store.db, accountId);
  }

  async get(accountId: number, id: string): Promise<WebhookRow> {
    const row = await webhooksRepository.find(this.options.store.db, accountId, id);
    if (row === undefined) throw new ApiError('WEBHOOK_NOT_FOUND');
    return row;
  }

  async update(accountId: number, id: string, input: WebhookInput): Promise<WebhookRow> {
    const { store, clock } = this.options;
    await this.get(accountId, id);
    const checked = await this.check(accountId, input);
    const changes: WebhookChanges = { updated_at: clock.now() };
    if (input.url !== undefined) changes.url = input.url;
    if (checked.devices !== undefined)
      changes.devices = checked.devices === null ? null : JSON.stringify(checked.devices);
    if (checked.events !== undefined) changes.events = checked.events === null ? null : JSON.stringify(checked.events);
    if (input.format !== undefined) changes.format = input.format;
    if (checked.headers !== undefined) changes.headers = JSON.stringify(checked.headers);
    if (input.enabled !== undefined) changes.enabled = input.enabled ? 1 : 0;
    const row = await webhooksRepository.update(store.db, accountId, id, changes);
    if (row === undefined) throw new ApiError('WEBHOOK_NOT_FOUND');
    forgetAccountWebhooks(store.db, accountId);
    return row;
  }

  /**
   * Deletes the webhook; its waiting deliveries end `failed` in the same transaction (its log is no longer
   * reachable, and goes with retention like every ended delivery).
   */
  async delete(accountId: number, id: string): Promise<WebhookRow> {
    const { db } = this.options.store;
    const row = await this.get(accountId, id);
    const deleted = await db.transaction().execute(async (trx) => {
      if (!(await webhooksRepository.delete(trx, accountId, id))) return false;
      await webhooksRepository.stopDeliveries(trx, id, this.options.clock.now());
      return true;
    });
    if (!deleted) throw new ApiError('WEBHOOK_NOT_FOUND');
    forgetAccountWebhooks(db, accountId);
    return row;
  }

  /** A new secret; the one it replaces keeps signing beside it for SECRET_OVERLAP_MS (as a device's does). */
  async rotateSecret(accountId: number, id: string): Promise<WebhookRow> {
    const { store, clock } = this.options;
    const current = await this.get(accountId, id);
    const now = clock.now();
    const row = await webhooksRepository.update(store.db, accountId, id, {
      secret: newWebhookSecret(),
      secret_previous: current.secret,
      secret_previous_until: now + SECRET_OVERLAP_MS,
      updated_at: now,
    });
    if (row === undefined) throw new ApiError('WEBHOOK_NOT_FOUND');
    return row;
  }

  async deliveries(
    accountId: number,
    id: string,
    filter: DeliveryFilter,
  ): Promise<{ data: DeliveryJson[]; total: number }> {
    const hook = await this.get(accountId, id);
    const { db } = this.options.store;
    const where = { status: filter.status, type: filter.type };
    const scope = { webhookId: id };
    const [rows, total] = await Promise.all([
      deliveryLogRepository.page(db, accountId, scope, {
        ...where,
        limit: filter.per_page,
        offset: (filter.page - 1) * filter.per_page,
      }),
      deliveryLogRepository.count(db, accountId, scope, where),
    ]);
    const attempts = groupByEvent(
      await deliveryLogRepository.attemptsOf(
        db,
        rows.map((row) => row.id),
      ),
    );
    const format = webhookFormat(hook.format);
    return { data: rows.map((row) => presentDelivery(row, attempts.get(row.id) ?? [], format)), total };
  }

  async retry(accountId: number, id: string, deliveryId: string): Promise<DeliveryJson> {
    const hook = await this.get(accountId, id);
    const { db } = this.options.store;
    const row = await deliveryLogRepository.dueNow(
      db,
      accountId,
      { webhookId: id },
      deliveryId,
      this.options.clock.now(),
    );
    if (row === undefined) throw new ApiError('DELIVERY_NOT_FOUND');
    this.options.onDue(id);
    return presentDelivery(row, await deliveryLogRepository.attemptsOf(db, [row.id]), webhookFormat(hook.format));
  }

  /** Checks what the input sets; answers the normalised filters and headers (undefined: not changed). */
  private async check(
    accountId: number,
    input: WebhookInput,
  ): Promise<{ devices?: number[] | null; events?: string[] | null; headers?: Record<string, string> }> {
    const errors: Record<string, string[]> = {};
    if (input.url !== undefined) {
      if (!isWebhookUrl(input.url)) errors.url = ['must be an absolute http(s) URL'];
      else {
        const problem = await this.options.urlProblem(input.url);
        if (problem !== null) errors.url = [problem];
      }
    }
    if (input.format !== undefined && !isWebhookFormat(input.format)) {
      errors.format = [`must be one of: ${WEBHOOK_FORMATS.join(', ')}`];
    }
    const headers = input.headers === undefined ? undefined : checkHeaders(input.headers, errors);
    const events =
      input.events === undefined
        ? undefined
        : input.events === null || input.events.includes('*')
          ? null
          : [...new Set(input.events)];
    if (input.events && input.events.includes('*') && input.events.length > 1) {
      errors.events = ['"*" stands alone: it means every event type'];
    }
    if (Object.keys(errors).length > 0) throw new ApiError('VALIDATION_FAILED', { errors });
    let devices: number[] | null | undefined = undefined;
    if (input.devices !== undefined && input.devices !== null) {
      devices = [...new Set(input.devices)];
      const own = await webhooksRepository.ownDevices(this.options.store.db, accountId, devices);
      const missing = devices.filter((device) => !own.has(device));
      if (missing.length > 0) {
        throw new ApiError('DEVICE_NOT_FOUND', { error: `no device ${missing.join(', ')} in this account` });
      }
    } else if (input.devices === null) devices = null;
    return {
      ...(devices === undefined ? {} : { devices }),
      ...(events === undefined ? {} : { events }),
      ...(headers === undefined ? {} : { headers }),
    };
  }
}

/** Custom headers as stored (names as given), or the reasons they are refused added to `errors`. */
function checkHeaders(
  headers: Readonly<Record<string, string>>,
  errors: Record<string, string[]>,
): Record<string, string> {
  const names = Object.keys(headers);
  if (names.length > MAX_HEADERS) {
    errors.headers = [`at most ${MAX_HEADERS} custom headers`];
    return {};
  }
  const seen = new Set<string>();
  for (const name of names) {
    const lower = name.toLowerCase();
    const value = headers[name]!;
    const path = `headers.${name}`;
    if (name.length === 0 || name.length > MAX_HEADER_NAME || !TOKEN.test(name)) {
      errors[path] = [`must be a header name (letters, digits and !#$%&'*+.^_\`|~-, at most ${MAX_HEADER_NAME})`];
    } else if (RESERVED.has(lower) || lower.startsWith('webhook-')) {
      errors[path] = [
        'is set by the gateway: Host, Content-Length, Transfer-Encoding, Connection and webhook-* are refused',
      ];
    } else if (seen.has(lower)) {
      errors[path] = ['is given twice (header names are case-insensitive)'];
    } else if (value.length > MAX_HEADER_VALUE || !VALUE.test(value)) {
      errors[path] = [`must be printable ASCII on one line, at most ${MAX_HEADER_VALUE} characters`];
    }
    seen.add(lower);
  }
  return { ...headers };
}

/**
 * Contacts that changed on the network (DECISIONS 16; docs/webhooks.md, contact.updated): each `contact_changed`
 * a connection reports drops the device's cached profile of the number and records `contact.updated
 * {phone, changes, name?}` (`changes`: `name` and/or `profile_picture`), in one transaction, so a client that
 * reads the contact on the event already gets the network's new profile.
 *
 * Owns: that rule. Must never: fail or hold up the device's connection (a failure is logged), or record a change
 * for a deleted device.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { DeviceNetworkListener } from '../devices/connections.js';
import { NetworkEventWork } from '../devices/event-work.js';
import { devicesRepository } from '../devices/repository.js';
import { recordEvent } from '../events/record.js';
import type { ContactChangedEvent } from '../network/network.js';
import type { Store } from '../store/store.js';
import { contactsRepository } from './repository.js';

export interface ContactUpdatesOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly connections: { onEvent(listener: DeviceNetworkListener): () => void };
  readonly logger: FastifyBaseLogger;
}

export class ContactUpdates {
  private readonly work = new NetworkEventWork(
    'contact_changed',
    (deviceId, event) => this.handle(deviceId, event),
    (error, deviceId) => this.options.logger.warn({ err: error, deviceId }, 'a contact change could not be recorded'),
  );

  constructor(private readonly options: ContactUpdatesOptions) {}

  start(): void {
    this.work.start(this.options.connections);
  }

  /** Stops listening and waits for the changes being recorded. */
  close(): Promise<void> {
    return this.work.close();
  }

  private async handle(deviceId: number, event: ContactChangedEvent): Promise<void> {
    const changes = [...(event.name !== undefined ? ['name'] : []), ...(event.picture ? ['profile_picture'] : [])];
    if (changes.length === 0) return;
    const now = this.options.clock.now();
    await this.options.store.db.transaction().execute(async (trx) => {
      const device = await devicesRepository.findById(trx, deviceId);
      if (device === undefined || device.deleted_at !== null) return;
      await contactsRepository.forget(trx, deviceId, event.phone);
      const data = { phone: event.phone, changes, ...(event.name !== undefined ? { name: event.name } : {}) };
      await recordEvent(trx, device, 'contact.updated', data, now);
    });
  }
}

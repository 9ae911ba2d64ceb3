/**
 * Chat settings changed on the phone (DECISIONS 16; docs/api.md, Chats): each `chat_changed` a device's connection
 * reports (on WhatsApp the account's app-state sync; in the sandbox `PATCH /sandbox/phones/{phone}/chats/{chat}`)
 * is stored on the device's chat as the network now has it, so `GET /chats` shows the phone's archive, pin and mute.
 *
 * Owns: that rule (the chat is added when the gateway had none, as `PATCH /chats/{chat}` adds it), and the order:
 * a device's changes are stored one after the other as the network told them (archived then unarchived at once
 * ends unarchived).
 * Must never: fail or hold up the device's connection (a failure is logged), carry the change back out to the
 * network, write the message-derived columns of `chats`, or store a change for a deleted device.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { DeviceNetworkListener } from '../devices/connections.js';
import { NetworkEventWork, type NetworkEventOf } from '../devices/event-work.js';
import { devicesRepository } from '../devices/repository.js';
import type { Store } from '../store/store.js';
import { chatsRepository, type ChatSettings } from './repository.js';

export interface PhoneChatSettingsOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly connections: { onEvent(listener: DeviceNetworkListener): () => void };
  readonly logger: FastifyBaseLogger;
}

export class PhoneChatSettings {
  /** Each device's last change being stored: the next one waits for it. */
  private readonly tails = new Map<number, Promise<void>>();
  private readonly work = new NetworkEventWork(
    'chat_changed',
    (deviceId, event) => this.inOrder(deviceId, event),
    (error, deviceId) => this.options.logger.warn({ err: error, deviceId }, 'a chat change could not be stored'),
  );

  constructor(private readonly options: PhoneChatSettingsOptions) {}

  start(): void {
    this.work.start(this.options.connections);
  }

  /** Stops listening and waits for the changes being stored. */
  close(): Promise<void> {
    return this.work.close();
  }

  private inOrder(deviceId: number, event: NetworkEventOf<'chat_changed'>): Promise<void> {
    const before = this.tails.get(deviceId) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => this.handle(deviceId, event));
    const tail = mine.catch(() => undefined);
    this.tails.set(deviceId, tail);
    void tail.then(() => {
      if (this.tails.get(deviceId) === tail) this.tails.delete(deviceId);
    });
    return mine;
  }

  private async handle(deviceId: number, event: NetworkEventOf<'chat_changed'>): Promise<void> {
    const { change } = event;
    const settings: ChatSettings = {
      ...(change.archived === undefined ? {} : { archived: change.archived }),
      ...(change.pinned === undefined ? {} : { pinned: change.pinned }),
      ...(change.mutedUntil === undefined ? {} : { mutedUntil: change.mutedUntil?.getTime() ?? null }),
    };
    const { db } = this.options.store;
    const device = await devicesRepository.findById(db, deviceId);
    if (device === undefined || device.deleted_at !== null) return;
    await chatsRepository.saveSettings(db, device.account_id, deviceId, event.chat, settings, this.options.clock.now());
  }
}

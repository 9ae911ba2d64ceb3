/**
 * Incoming calls (DECISIONS 16; docs/devices.md, Calls): each call the network announces is recorded as a
 * `call.incoming` event, and a device set to `reject_calls` rejects it on the network and, with a
 * `reject_calls_message`, answers the caller with that text.
 *
 * Owns: the order (reject first, so the caller is not left ringing; then the event, saying whether it was
 * rejected; then the message), and that the message is accepted at most once per call (Idempotency-Key
 * `call-reply:<device>:<call id>`), through `POST /messages`' own path: counted, queued and paced like any send.
 * Must never: fail or hold up the device's connection (every failure is logged), or answer a caller known only by
 * LID (no number to write to).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { recordEvent } from '../events/record.js';
import type { IncomingCall, NetworkConnection, NetworkEvent } from '../network/network.js';
import { isPhoneNumber } from '../shapes.js';
import type { Store } from '../store/store.js';
import type { DeviceNetworkListener } from './connections.js';
import { NetworkEventWork } from './event-work.js';
import { devicesRepository } from './repository.js';

/** What calls need from whatever holds the live connections. */
export interface CallConnections {
  onEvent(listener: DeviceNetworkListener): () => void;
  connection(deviceId: number): NetworkConnection | null;
}

/** The part of the messages service the answer goes through (`POST /messages`). */
export interface CallReplySender {
  send(accountId: number, body: unknown, idempotencyKey: string | undefined): Promise<unknown>;
}

export interface CallsOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly connections: CallConnections;
  readonly messages: CallReplySender;
  readonly logger: FastifyBaseLogger;
}

type CallEvent = Extract<NetworkEvent, { type: 'incoming_call' }>;

export class IncomingCalls {
  private readonly work = new NetworkEventWork(
    'incoming_call',
    (deviceId, event) => this.handle(deviceId, event),
    (error, deviceId, event) =>
      this.options.logger.warn({ err: error, deviceId, callId: event.id }, 'an incoming call could not be handled'),
  );

  constructor(private readonly options: CallsOptions) {}

  start(): void {
    this.work.start(this.options.connections);
  }

  /** Stops listening and waits for the calls being handled. */
  close(): Promise<void> {
    return this.work.close();
  }

  private async handle(deviceId: number, { type: _type, ...call }: CallEvent): Promise<void> {
    const { store, clock, logger } = this.options;
    const device = await devicesRepository.findById(store.db, deviceId);
    if (device === undefined || device.deleted_at !== null || device.phone === null) return;
    let rejected = false;
    if (device.reject_calls === 1) rejected = await this.reject(deviceId, call);
    await recordEvent(
      store.db,
      device,
      'call.incoming',
      { call_id: call.id, from: call.from, video: call.video, group: call.group ?? null, rejected },
      clock.now(),
    );
    const text = device.reject_calls_message;
    if (!rejected || text === null || text === undefined || !isPhoneNumber(call.from)) return;
    const body = { device: device.phone, receiver: call.from, type: 'chat', params: { text } };
    await this.options.messages.send(device.account_id, body, `call-reply:${deviceId}:${call.id}`).catch((error) => {
      logger.warn({ err: error, deviceId, callId: call.id }, 'the answer to a rejected call was not accepted');
    });
  }

  private async reject(deviceId: number, call: IncomingCall): Promise<boolean> {
    const conn = this.options.connections.connection(deviceId);
    if (conn === null) return false;
    try {
      await conn.rejectCall(call);
      return true;
    } catch (error) {
      this.options.logger.warn({ err: error, deviceId, callId: call.id }, 'an incoming call could not be rejected');
      return false;
    }
  }
}

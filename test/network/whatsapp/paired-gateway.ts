/**
 * The whole in-process gateway over the WhatsApp connector, its Baileys socket the scripted fake, and a device
 * paired through it the way WhatsApp pairs one (a QR, the phone confirms, the restart the network asks for, open).
 * Not a test file itself.
 *
 * Owns: starting that gateway and scanning a device's QR over the fake sockets, for the files that test the
 * gateway on WhatsApp (gateway, lid, unsupported, wrong-phone, message-changes, poll-votes).
 * Must never: assert what a test is about (only the steps of pairing are checked here), or keep state between the
 * files that use it (each call makes its own fake WhatsApp and gateway).
 */
import pino from 'pino';
import { expect } from 'vitest';
import type { Config } from '../../../src/config.js';
import { createWhatsAppNetwork } from '../../../src/network/whatsapp/index.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { waitForDevice } from '../../helpers/pairing.js';
import { startReceiver, type Receiver } from '../../events/helpers.js';
import { FakeWhatsApp, type FakeSocket } from './fake-socket.js';
import { SCRIPTED_PRE_KEYS } from './harness.js';

export interface WhatsAppGateway {
  readonly gw: TestGateway;
  readonly wa: FakeWhatsApp;
}

/** A gateway whose network is WhatsApp over a fresh scripted fake, its session state sealed with `keys`. */
export async function startWhatsAppGateway(
  keys: { current: Buffer; previous: Buffer[] },
  config: Partial<Config> = {},
): Promise<WhatsAppGateway> {
  const wa = new FakeWhatsApp();
  const gw = await startGateway({
    config,
    build: {
      network: (host) =>
        createWhatsAppNetwork({
          states: host.states,
          keys,
          logger: pino({ level: 'silent' }),
          factory: wa.factory,
          ackTimeoutMs: 5000,
          preKeysAtPairing: SCRIPTED_PRE_KEYS,
        }),
    },
  });
  return { gw, wa };
}

/**
 * Asks for the device's QR, has the phone `me` (a JID such as `4915100000071:4@s.whatsapp.net`) confirm it, and
 * ends the pairing connection with the restart WhatsApp asks for; answers the next socket, not yet open, for the
 * test to script before it opens.
 */
export async function scanOverFake(at: WhatsAppGateway, deviceId: number, me: string): Promise<FakeSocket> {
  const { gw, wa } = at;
  const before = wa.sockets.length;
  const qr = gw.request('GET', `/devices/${deviceId}/qr?response_type=url`);
  const first = await wa.socket(before);
  first.connection({ qr: '2@pairing-ref,noise,identity,adv' });
  expect((await qr).status).toBe(200);
  first.pairSuccess(me);
  first.close(515, 'Stream Errored (restart required)');
  return wa.socket(before + 1);
}

/**
 * Creates a device, pairs it as the phone `phone` (its first linked device) and opens the connection; answers the
 * device id and the open socket once the device reads PAIRED and connected. `prepare` scripts the socket (acks,
 * groups) before it opens.
 */
export async function pairedDevice(
  at: WhatsAppGateway,
  phone: string,
  { name = 'on WhatsApp', prepare }: { name?: string; prepare?: (socket: FakeSocket) => void } = {},
): Promise<{ id: number; socket: FakeSocket }> {
  const created = await at.gw.request('POST', '/devices', { package: 'BUSINESS', name });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.data.id as number;
  const socket = await scanOverFake(at, id, `${phone}:4@s.whatsapp.net`);
  prepare?.(socket);
  socket.connection({ connection: 'open' });
  await waitForDevice(at.gw, id, (d) => d.paired_status === 'PAIRED' && d.connected === true, 'paired');
  return { id, socket };
}

export interface HookedWhatsAppDevice {
  readonly gw: TestGateway;
  readonly hooks: Receiver;
  readonly socket: FakeSocket;
  /** The device as PATCH /devices/{id} answered once its webhook URL was set. */
  readonly device: { id: number; webhook_secret: string };
}

/**
 * A WhatsApp gateway (private URLs allowed, no send pacing) with a webhook receiver and a device paired as `phone`
 * whose webhook URL, set after pairing, is the receiver's. Whatever started is closed again if a later step fails.
 */
export async function hookedWhatsAppDevice(
  keys: { current: Buffer; previous: Buffer[] },
  phone: string,
  name: string,
): Promise<HookedWhatsAppDevice> {
  const hooks = await startReceiver();
  let gw: TestGateway | undefined;
  try {
    const at = await startWhatsAppGateway(keys, { sendIntervalMs: 0, allowPrivateUrls: true });
    gw = at.gw;
    const paired = await pairedDevice(at, phone, { name });
    const patched = await gw.request('PATCH', `/devices/${paired.id}`, { webhook_url: hooks.url });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    return { gw, hooks, socket: paired.socket, device: patched.body.data };
  } catch (error) {
    await gw?.close();
    await hooks.close();
    throw error;
  }
}

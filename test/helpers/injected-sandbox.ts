/**
 * A gateway on the in-process sandbox through which a test can speak as the network to a device's connection
 * (acknowledgements, receipts, refusals the sandbox itself would not send at that moment), with one device paired
 * and a webhook URL set so that events are recorded. Not a test file itself.
 *
 * Owns: wrapping the sandbox network so its per-device event handlers can be reached, and that setup.
 * Must never: change what the sandbox sends by itself, or share a gateway between test files.
 */
import { expect } from 'vitest';
import type { Network, NetworkEvent, NetworkEventHandler } from '../../src/network/network.js';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { startGateway, type TestGateway } from './gateway.js';
import { createPairedDevice } from './pairing.js';

/** Hands `event` to the device's connection as if the network had sent it. */
export type Inject = (deviceId: number, event: NetworkEvent) => void;

/** The sandbox, with a way for the test to speak as the network to a device's connection. */
export function sandboxWithInjection(): { network: Network; inject: Inject } {
  const sandbox = createSandboxNetwork({ deliveryDelayMs: 5, readDelayMs: 5 });
  const handlers = new Map<number, NetworkEventHandler>();
  const network: Network = {
    description: sandbox.description,
    sandbox: sandbox.sandbox,
    close: () => sandbox.close(),
    connect: (options, onEvent) => {
      handlers.set(options.deviceId, onEvent);
      return sandbox.connect(options, onEvent);
    },
  };
  const inject: Inject = (deviceId, event) => handlers.get(deviceId)!(event);
  return { network, inject };
}

/**
 * A gateway on that sandbox (no pacing between sends, private webhook URLs allowed) with the device of `phone`
 * paired and connected, its webhook URL a closed local port (deliveries fail; the events are recorded all the same).
 */
export async function startInjectedGateway(
  phone: string,
): Promise<{ gw: TestGateway; device: { id: number; phone: string }; inject: Inject }> {
  const made = sandboxWithInjection();
  const gw = await startGateway({
    build: { network: made.network },
    config: { sendIntervalMs: 0, allowPrivateUrls: true },
  });
  const device = await createPairedDevice(gw, phone);
  const patched = await gw.request('PATCH', `/devices/${device.id}`, { webhook_url: 'http://127.0.0.1:9/hook' });
  expect(patched.status).toBe(200);
  return { gw, device, inject: made.inject };
}

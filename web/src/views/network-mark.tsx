/**
 * The mark of a device kept on another network than its account's (docs/networks-per-device.md):
 * paired on the sandbox before the gateway ran WhatsApp, it stays there until it is logged out or paired again.
 *
 * Owns: that one mark. Must never: show for a device on its account's network (every other device).
 */
import type { Device, GatewayInfo } from '../api';

const NAMES = { sandbox: 'the sandbox', whatsapp: 'WhatsApp' } as const;

export function NetworkMark({ device, info }: { device: Device; info: GatewayInfo }) {
  if (device.network === undefined || device.network === info.network) return null;
  const name = NAMES[device.network];
  return (
    <span
      class={`badge network-kept network-${device.network}`}
      title={`Paired on ${name}: it stays there until it is logged out or paired again`}
    >
      on {name}
    </span>
  );
}

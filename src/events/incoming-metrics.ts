/**
 * Counters on /metrics for what phones send (docs/whatsapp.md, Incoming kinds).
 *
 * Owns: `gateway_incoming_unsupported_total{type}`, how many incoming
 * messages of each kind the gateway has no shape for yet arrived, by the
 * network's own type name (a small, fixed set per network).
 * Must never: label by anything a sender chooses (text, ids, numbers).
 */
import { Counter, type Registry } from 'prom-client';
import type { ConnectionManager } from '../devices/connections.js';

/** Type names look like `eventMessage` or `protocolMessage.REVOKE`; anything else is counted as `other`. */
const TYPE_NAME = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;

export function installIncomingMetrics(
  registry: Registry,
  connections: Pick<ConnectionManager, 'onEvent'>,
): () => void {
  const unsupported = new Counter({
    name: 'gateway_incoming_unsupported_total',
    help: 'Incoming messages of a kind the gateway has no shape for yet, by the network type name',
    labelNames: ['type'],
    registers: [registry],
  });
  return connections.onEvent((_deviceId, event) => {
    if (event.type !== 'incoming_message' || event.content.type !== 'unsupported') return;
    const name = event.content.networkType;
    unsupported.inc({ type: TYPE_NAME.test(name) ? name : 'other' });
  });
}

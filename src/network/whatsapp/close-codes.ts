/**
 * What a closed WhatsApp socket means for the device (docs/internals.md, WhatsApp and sandbox accounts).
 *
 * Owns: the one table from Baileys' close codes to an action. Pure.
 * Must never: decide on backoff times (the gateway's), or make a logged-out
 * session look like a transient drop (its stored state is no longer valid).
 */
import { DisconnectReason } from 'baileys';
import type { NetworkEvent, ReconnectHint } from '../network.js';

export type CloseAction =
  /** Expected after pairing (515): open a new socket with the same state at once, tell the gateway nothing. */
  | { readonly kind: 'restart' }
  /** The server ran out of QR codes for this attempt: open a new pairing socket, tell the gateway nothing. */
  | { readonly kind: 'new-qr-socket' }
  /** Unlinked from the phone, banned, or the session is no longer valid. */
  | { readonly kind: 'logged_out'; readonly reason: string }
  /** A drop the gateway reconnects from, no sooner than `retry` allows. */
  | { readonly kind: 'disconnected'; readonly reason: string; readonly retry: ReconnectHint };

/** The status code Baileys puts on a close (a Boom error's `output.statusCode`), if any. */
export function closeCode(error: unknown): number | undefined {
  const code = (error as { output?: { statusCode?: unknown } } | undefined)?.output?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

export function closeAction(error: unknown, pairing: boolean): CloseAction {
  const code = closeCode(error);
  const text = error instanceof Error ? error.message : 'connection closed';
  const reason = code === undefined ? text : `${text} (${code})`;
  switch (code) {
    case DisconnectReason.restartRequired:
      return { kind: 'restart' };
    case DisconnectReason.loggedOut:
    case DisconnectReason.forbidden:
    case 402:
    case 406:
      return { kind: 'logged_out', reason };
    case DisconnectReason.connectionReplaced:
      return { kind: 'disconnected', reason, retry: 'replaced' };
    case 405:
      // WhatsApp refuses the WhatsApp Web version the library announces; the reason carries the fix.
      return {
        kind: 'disconnected',
        reason: `${reason}: WhatsApp refused this WhatsApp Web version as too old; set GATEWAY_WHATSAPP_VERSION to the current one or upgrade the gateway (docs/whatsapp.md)`,
        retry: 'outdated',
      };
    case DisconnectReason.multideviceMismatch:
      // "Multi-device beta not joined" (the server's downgrade_webclient): the account cannot have linked
      // devices any more; the session will never open again.
      return { kind: 'logged_out', reason };
    case DisconnectReason.timedOut:
      // While pairing, 408 also ends an attempt whose QR codes ran out; the attempt goes on with a new socket.
      if (pairing && /QR refs attempts ended/i.test(text)) return { kind: 'new-qr-socket' };
      return { kind: 'disconnected', reason, retry: 'backoff' };
    default:
      return { kind: 'disconnected', reason, retry: 'backoff' };
  }
}

/**
 * How a send the server refused in its acknowledgement fails. 479 (smax-invalid: the library's note says a
 * stale device session or addressing) is not a close but a refusal of one stanza; a later attempt, after the
 * library has refreshed the recipient's devices, can pass, so it is transient (the gateway's attempts are
 * capped). Every other refusal (463 restricted account among them: retrying worsens it) is permanent.
 */
export function ackRefusalKind(error: string): 'transient' | 'permanent' {
  return error === '479' ? 'transient' : 'permanent';
}

export type Final = Extract<NetworkEvent, { type: 'disconnected' | 'logged_out' }>;

/** The event that ends a connection: exactly one of them, and nothing after it. */
export function isFinal(event: NetworkEvent): event is Final {
  return event.type === 'disconnected' || event.type === 'logged_out';
}

/**
 * The part of a Baileys socket the connector uses, as a typed port, and the
 * factory that makes real sockets.
 *
 * Owns: the port's shape, picked from Baileys' own `WASocket` type (so a
 * library upgrade that changes a signature fails `tsc`), and the socket
 * settings that bound memory and traffic: no full history sync, no online
 * presence on connect (phones keep their notifications), status broadcasts
 * and newsletters ignored before decryption, resend requests answered from
 * the gateway's own sent records.
 * Must never: keep an in-memory message store, or let the library print to
 * the terminal.
 */
import makeWASocket, {
  WA_CERT_DETAILS,
  type AuthenticationState,
  type WAMessageKey,
  type WASocket,
  isJidNewsletter,
  isJidStatusBroadcast,
  proto,
} from 'baileys';
import type { Logger } from 'pino';
import { GATEWAY_BROWSER } from './browser.js';

export type SocketPort = Pick<
  WASocket,
  | 'ev'
  | 'sendMessage'
  | 'relayMessage'
  | 'requestPairingCode'
  | 'logout'
  | 'end'
  | 'groupFetchAllParticipating'
  | 'groupMetadata'
  | 'groupCreate'
  | 'groupParticipantsUpdate'
  | 'groupUpdateSubject'
  | 'groupUpdateDescription'
  | 'groupSettingUpdate'
  | 'groupToggleEphemeral'
  | 'onWhatsApp'
  | 'sendPresenceUpdate'
  | 'user'
> & {
  /** The raw stanza stream: only its event subscription, for the server's message acknowledgements. */
  readonly ws: Pick<WASocket['ws'], 'on' | 'off'>;
};

export interface SocketOptions {
  readonly auth: AuthenticationState;
  readonly logger: Logger;
  /** What we sent under a key, for the network's resend requests; undefined when not ours or too old. */
  readonly getMessage: (key: WAMessageKey) => Promise<proto.IMessage | undefined>;
}

export type SocketFactory = (options: SocketOptions) => SocketPort;

export interface RealSocketSettings {
  /** Where WhatsApp Web's socket is (tests point it at 127.0.0.1). */
  readonly url?: string;
  /** The Noise certificate root to trust instead of WhatsApp's: a local stand-in's (docs/standin.md). */
  readonly rootKey?: Buffer;
  readonly connectTimeoutMs?: number;
  /** The WhatsApp Web version to announce instead of the library's default (`GATEWAY_WHATSAPP_VERSION`). */
  readonly version?: readonly [number, number, number];
}

export function realSocketFactory(settings: RealSocketSettings = {}): SocketFactory {
  // The library reads the root from its exported (process-wide) details at each handshake; this is the one place
  // the gateway replaces it, and config.ts accepts a replacement only together with a loopback URL.
  if (settings.rootKey !== undefined) WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(settings.rootKey);
  return ({ auth, logger, getMessage }) =>
    makeWASocket({
      auth,
      logger,
      getMessage,
      browser: GATEWAY_BROWSER,
      ...(settings.version === undefined ? {} : { version: [...settings.version] }),
      ...(settings.url === undefined ? {} : { waWebSocketUrl: settings.url }),
      connectTimeoutMs: settings.connectTimeoutMs ?? 20_000,
      markOnlineOnConnect: false,
      syncFullHistory: false,
      emitOwnEvents: false,
      fireInitQueries: true,
      // Only the initial bootstrap: the library needs it for its LID mappings; the gateway keeps no history.
      shouldSyncHistoryMessage: (message) => message.syncType === proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
      // Status updates only: a broadcast list's message is an ordinary message to this device (docs/whatsapp.md).
      shouldIgnoreJid: (jid) => isJidStatusBroadcast(jid) || isJidNewsletter(jid) === true,
    });
}

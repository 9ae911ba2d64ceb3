/**
 * The part of a Baileys socket the connector uses, as a typed port, and the
 * factory that makes real sockets.
 *
 * Owns: the port's shape, picked from Baileys' own `WASocket` type (so a
 * library upgrade that changes a signature fails `tsc`), and the socket
 * settings that bound memory and traffic: no full history sync, no online
 * presence on connect (phones keep their notifications), newsletters ignored
 * before decryption (status updates are taken, never refused, and skipped
 * later: incoming.ts), resend requests answered from
 * the gateway's own sent records, and the library's transaction storage kept
 * in one shared storage (transaction-storage.ts).
 * Must never: keep an in-memory message store, or let the library print to
 * the terminal.
 */
import makeWASocket, {
  WA_CERT_DETAILS,
  type AuthenticationState,
  type GroupMetadata,
  type WAMessageKey,
  type WASocket,
  isJidNewsletter,
  proto,
} from 'baileys';
import type { Logger } from 'pino';
import { GATEWAY_BROWSER } from './browser.js';
import { shareTransactionStorage } from './transaction-storage.js';
import { carryViewOnceContext } from './view-once.js';

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
  | 'groupInviteCode'
  | 'groupRevokeInvite'
  | 'groupAcceptInvite'
  | 'groupLeave'
  | 'chatModify'
  | 'rejectCall'
  | 'onWhatsApp'
  | 'sendPresenceUpdate'
  | 'readMessages'
  | 'updateMediaMessage'
  | 'user'
> & {
  /**
   * The raw stanza stream: its event subscription, for the server's message acknowledgements, and whether it is
   * open (the library sends nothing on a stream that is not: a socket's key writes are refused then, auth-state.ts).
   */
  readonly ws: Pick<WASocket['ws'], 'on' | 'off' | 'isOpen'>;
  /**
   * The library's LID/number mapping store: the look-up of the number behind a LID (lid.ts; group receipts name
   * members by LID) and storing what group metadata teaches.
   */
  readonly signalRepository: {
    readonly lidMapping: Pick<
      WASocket['signalRepository']['lidMapping'],
      'getPNForLID' | 'getLIDForPN' | 'storeLIDPNMappings'
    >;
  };
};

export interface SocketOptions {
  readonly auth: AuthenticationState;
  readonly logger: Logger;
  /** What we sent under a key, for the network's resend requests; undefined when not ours or too old. */
  readonly getMessage: (key: WAMessageKey) => Promise<proto.IMessage | undefined>;
  /** A group's metadata before a group send: cached by the connection (group-cache.ts) instead of fetched each time. */
  readonly cachedGroupMetadata?: (jid: string) => Promise<GroupMetadata | undefined>;
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
  return ({ auth, logger, getMessage, cachedGroupMetadata }) => {
    const socket = makeWASocket({
      auth,
      logger,
      getMessage,
      ...(cachedGroupMetadata === undefined ? {} : { cachedGroupMetadata }),
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
      // Channels only. A jid ignored here is refused to the network (the library answers it with a negative ack,
      // error 500), so status updates are taken and then skipped by the incoming translation (incoming.ts), and a
      // broadcast list's message is an ordinary message to this device (docs/whatsapp.md).
      shouldIgnoreJid: (jid) => isJidNewsletter(jid) === true,
      // View-once media keeps its mentions (view-once.ts).
      patchMessageBeforeSending: (message) => carryViewOnceContext(message),
    });
    // The library's per-socket transaction storage would cost every promise of the process (transaction-storage.ts).
    shareTransactionStorage(socket.authState.keys);
    return socket;
  };
}

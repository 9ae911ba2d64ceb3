/**
 * The stand-in as a whole: one HTTP server on 127.0.0.1 that takes the WebSocket at /ws/chat and the control
 * interface at /control/..., plus the HTTPS media host, sharing one World.
 *
 * Owns: start and stop, logging in a linked device (success, its queued stanzas, the offline marker; 401
 * device_removed for an unlinked one; 515 under the restart_loop fault), and dispatching each stanza by kind.
 * Must never: listen on anything but a loopback address, or be imported by the gateway (src/): it is test
 * infrastructure only (see docs/standin.md).
 */
import { createServer, type Server } from 'node:http';
import { WebSocketServer } from 'ws';
import { type BinaryNode, type proto } from 'baileys';
import {
  makeNoiseIdentity,
  makeTlsIdentity,
  removeTlsIdentity,
  type NoiseIdentity,
  type TlsIdentity,
} from './certs.js';
import { handleControl } from './control.js';
import { Groups } from './groups.js';
import { answerIq, type IqContext } from './iq.js';
import { startMediaHost } from './media.js';
import { mediaRetryFromCompanion } from './media-retry.js';
import { Pairing, now } from './pairing.js';
import { sendInitialHistory } from './history.js';
import { ackFromCompanion, fromCompanion, receiptFromCompanion, type RoutingContext } from './routing.js';
import { Stream, type Hub } from './stream.js';
import { World, lidDeviceJid } from './world.js';
import { recordPresence, type SeenPresence } from './chatstates.js';

export interface StandinOptions {
  readonly port?: number;
  readonly host?: string;
  /** The media host's certificate; a fresh one when absent. */
  readonly tls?: TlsIdentity;
  /** Where log lines go; silent when absent. */
  readonly log?: (line: string) => void;
}

export interface Standin {
  readonly ws: string;
  readonly control: string;
  /** Base64 of the certificate root's public key: what a client puts into WA_CERT_DETAILS.PUBLIC_KEY. */
  readonly root_key: string;
  /** Path of the media host's CA certificate (PEM), for NODE_EXTRA_CA_CERTS. */
  readonly ca: string;
  readonly world: World;
  close(): Promise<void>;
}

export class StandinHub implements Hub, IqContext, RoutingContext {
  readonly world = new World();
  readonly streams = new Set<Stream>();
  readonly media = new Map<string, Buffer>();
  /** The phones' own copies of media whose copy on the host expired (media-retry.ts). */
  readonly phoneCopies = new Map<string, Buffer>();
  readonly pairing = new Pairing(this.world);
  readonly groups = new Groups(this);
  /** Presence and chat states devices told (chatstates.ts), for `GET /control/presence`. */
  readonly presence: SeenPresence[] = [];
  mediaHost = '';

  constructor(
    readonly identity: NoiseIdentity,
    readonly log: (message: string) => void,
  ) {}

  onClosed(stream: Stream): void {
    this.pairing.forget(stream);
  }

  onRegistration(stream: Stream): void {
    this.pairing.offerRefs(stream);
  }

  async onLogin(stream: Stream, payload: proto.ClientPayload): Promise<void> {
    const phone = String(payload.username ?? '');
    const account = this.world.accounts.get(phone);
    const companion = account?.companions.get(payload.device ?? 0);
    if (companion === undefined || stream.noiseKey === undefined || !companion.noiseKey.equals(stream.noiseKey)) {
      stream.send({ tag: 'failure', attrs: { reason: '401', location: 'standin' } });
      stream.end();
      return;
    }
    if (companion.removed) return stream.end(401, 'device_removed');
    // Every login of a linked device counts, also one answered with a restart (a restart loop shows in the count).
    this.world.stats.logins++;
    if (this.world.faults.restart_loop === true) return stream.end(515);
    if (companion.stream !== undefined) companion.stream.end(440, 'replaced');
    companion.stream = stream;
    stream.companion = companion;
    stream.send({
      tag: 'success',
      attrs: {
        t: now(),
        props: '1',
        abprops: '1',
        location: 'standin',
        creation: now(),
        lid: lidDeviceJid(companion.account, companion.device),
      },
    });
    const pending = companion.pending.splice(0);
    for (const node of pending) this.world.deliver(companion, { ...node, attrs: { ...node.attrs, offline: '1' } });
    stream.send({
      tag: 'ib',
      attrs: { from: 's.whatsapp.net' },
      content: [{ tag: 'offline', attrs: { count: String(pending.length) } }],
    });
    if (!companion.historySent) {
      companion.historySent = true;
      await sendInitialHistory(this, companion).catch((error) =>
        this.log(`history sync failed: ${(error as Error).stack}`),
      );
    }
  }

  async onStanza(stream: Stream, node: BinaryNode): Promise<void> {
    switch (node.tag) {
      case 'iq':
        return answerIq(this, stream, node);
      case 'message':
        if (stream.companion !== undefined)
          await fromCompanion(this, this.groups.fanout, stream.companion, node, stream);
        return;
      case 'receipt':
        // A re-upload request for media whose copy on the host expired: answered by the phone (media-retry.ts).
        if (stream.companion !== undefined && node.attrs.type === 'server-error') {
          stream.send({
            tag: 'ack',
            attrs: { class: 'receipt', id: node.attrs.id ?? '', from: node.attrs.to ?? '', type: 'server-error' },
          });
          mediaRetryFromCompanion(this, node, stream);
        } else if (stream.companion !== undefined) receiptFromCompanion(this, node, stream);
        return;
      case 'ack':
        if (stream.companion !== undefined) ackFromCompanion(this, node);
        // A device acknowledges a message it takes without a receipt, or refuses it: not offered again either way.
        if (stream.companion !== undefined && node.attrs.class === 'message' && node.attrs.id !== undefined) {
          if (node.attrs.error === undefined) this.world.receipted(stream.companion, [node.attrs.id]);
          else this.world.refused(stream.companion, node.attrs.id);
        }
        return;
      case 'presence':
      case 'chatstate':
        // Nothing to answer; kept for the control API.
        if (stream.companion !== undefined) recordPresence(this.presence, stream.companion, node);
        return;
      default:
        // ib: nothing to answer.
        return;
    }
  }
}

export async function startStandin(options: StandinOptions = {}): Promise<Standin> {
  const host = options.host ?? '127.0.0.1';
  const identity = makeNoiseIdentity();
  // An identity made here is this stand-in's alone: its folder (the CA file and key) goes when it closes.
  const ownTls = options.tls === undefined;
  const tls = options.tls ?? makeTlsIdentity();
  const hub = new StandinHub(identity, options.log ?? (() => undefined));
  const media = await startMediaHost(tls, hub.media, hub.world.faults, host, hub.world.stats);
  hub.mediaHost = `${host}:${media.port}`;
  const http: Server = createServer((req, res) => {
    void handleControl(hub, req, res);
  });
  const wss = new WebSocketServer({ noServer: true });
  http.on('upgrade', (req, socket, head) => {
    if (!(req.url ?? '').startsWith('/ws/chat')) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => new Stream(ws, hub));
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, host, resolve));
  const port = (http.address() as { port: number }).port;
  return {
    ws: `ws://${host}:${port}/ws/chat`,
    control: `http://${host}:${port}`,
    root_key: identity.root.public.toString('base64'),
    ca: tls.caPath,
    world: hub.world,
    close: async () => {
      for (const stream of [...hub.streams]) stream.end();
      wss.close();
      http.closeAllConnections();
      media.server.closeAllConnections();
      await Promise.all([
        new Promise<void>((resolve) => http.close(() => resolve())),
        new Promise<void>((resolve) => media.server.close(() => resolve())),
      ]);
      if (ownTls) await removeTlsIdentity(tls);
    },
  };
}

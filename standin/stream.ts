/**
 * One client connection: the Noise handshake, then the encrypted stream of stanzas in both directions.
 *
 * Owns: the connection's life (handshake, registration or login, stream errors, close), decoding and encoding
 * stanzas with the library's WABinary codec, and handing each stanza to its handler in order.
 * Must never: decide what a stanza means beyond its kind (iq.ts, pairing.ts and routing.ts do), or let a handler's
 * failure pass silently: an IQ that fails gets an error answer.
 */
import type { proto } from 'baileys';
import { decodeBinaryNode, encodeBinaryNode, type BinaryNode } from 'baileys';
import type { WebSocket } from 'ws';
import type { NoiseIdentity } from './certs.js';
import { FrameReader, NoiseResponder, frame, type Transport } from './noise.js';
import type { Companion, DeviceStream, World } from './world.js';

/** What a stream needs from the rest of the stand-in. */
export interface Hub {
  readonly world: World;
  readonly identity: NoiseIdentity;
  readonly streams: Set<Stream>;
  /** An unregistered client finished its handshake: it waits for pairing. */
  onRegistration(stream: Stream, payload: proto.ClientPayload): void;
  /** A registered client finished its handshake with its login payload. */
  onLogin(stream: Stream, payload: proto.ClientPayload): Promise<void>;
  /** The stream ended: forget what waited on it. */
  onClosed(stream: Stream): void;
  /** A stanza from a connected client. */
  onStanza(stream: Stream, node: BinaryNode): Promise<void>;
  log(message: string): void;
}

export class Stream implements DeviceStream {
  private readonly reader = new FrameReader();
  private readonly noise: NoiseResponder;
  private transport?: Transport;
  private chain: Promise<void> = Promise.resolve();
  private helloDone = false;
  private closed = false;
  private nextId = 1;
  /** Set once logged in. */
  companion?: Companion;
  /** The client's static Noise key, known after the handshake. */
  noiseKey?: Buffer;
  /** Set while an unregistered client waits for pairing. */
  registration?: proto.ClientPayload;

  constructor(
    private readonly socket: WebSocket,
    private readonly hub: Hub,
  ) {
    this.noise = new NoiseResponder(hub.identity);
    hub.streams.add(this);
    hub.world.stats.streams_open++;
    socket.on('message', (data: Buffer) => {
      let frames: Buffer[];
      try {
        frames = this.reader.push(Buffer.from(data));
      } catch (error) {
        this.hub.log(`bad framing: ${(error as Error).message}`);
        this.end();
        return;
      }
      for (const f of frames) this.chain = this.chain.then(() => this.onFrame(f));
    });
    socket.on('close', () => this.onClose());
    socket.on('error', () => this.onClose());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** A fresh stanza id for server-initiated stanzas. */
  id(): string {
    return `standin-${this.nextId++}`;
  }

  private async onFrame(data: Buffer): Promise<void> {
    if (this.closed) return;
    try {
      if (this.noiseKey === undefined && this.transport === undefined) {
        if (!this.helloDone) {
          this.helloDone = true;
          this.raw(this.noise.serverHello(data));
          return;
        }
        const { noiseKey, payload, transport } = this.noise.clientFinish(data);
        this.noiseKey = noiseKey;
        this.transport = transport;
        await this.onPayload(payload);
        return;
      }
      if (this.transport === undefined) return;
      const node = await decodeBinaryNode(this.transport.decrypt(data));
      await this.hub.onStanza(this, node);
    } catch (error) {
      this.hub.log(`stream failed: ${(error as Error).stack ?? String(error)}`);
      this.end();
    }
  }

  private async onPayload(payload: proto.ClientPayload): Promise<void> {
    if (payload.devicePairingData) {
      this.registration = payload;
      this.hub.onRegistration(this, payload);
      return;
    }
    await this.hub.onLogin(this, payload);
  }

  private raw(bytes: Uint8Array): void {
    if (this.closed) return;
    this.socket.send(frame(bytes));
  }

  send(node: BinaryNode): void {
    if (this.closed || this.transport === undefined) return;
    this.raw(this.transport.encrypt(encodeBinaryNode(node)));
  }

  /** Ends the stream: with a stream error when a code is given, else a plain close. */
  end(code?: number, reason?: string): void {
    if (this.closed) return;
    if (code !== undefined) {
      const child: BinaryNode[] = reason === undefined ? [] : [{ tag: 'conflict', attrs: { type: reason } }];
      this.send({ tag: 'stream:error', attrs: { code: String(code) }, content: child });
    }
    this.closed = true;
    this.detach();
    this.socket.close();
  }

  private detach(): void {
    if (this.hub.streams.delete(this)) {
      this.hub.world.stats.streams_open--;
      this.hub.onClosed(this);
    }
    if (this.companion?.stream === this) {
      this.companion.stream = undefined;
      const again = this.companion.unreceipted.size;
      this.hub.world.requeueUnreceipted(this.companion);
      if (again > 0) this.hub.log(`stream ended: ${again} messages not receipted are offered again at the next login`);
    }
  }

  private onClose(): void {
    this.closed = true;
    this.detach();
  }
}

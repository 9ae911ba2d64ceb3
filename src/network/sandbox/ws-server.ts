/**
 * The sandbox as its own process: hosts one SandboxWorld behind a WebSocket
 * server that several gateway nodes can share, and answers `GET /health` on
 * the same port (open connections, and the devices whose connection was
 * closed as `replaced`: in a cluster, the sign of two nodes holding one device).
 *
 * Owns: mapping each client socket's connection ids to world links and
 * answering its calls. Must never: keep a link alive after its socket is gone
 * (the devices of a vanished gateway node are simply no longer connected).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RawData, WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import type {
  ChatChange,
  ChatLastMessage,
  ConnectOptions,
  GroupChanges,
  IncomingCall,
  NetworkGroupId,
  ParticipantAction,
  PhoneNumber,
  PictureUpload,
  PresenceState,
  ProfileChanges,
} from '../network.js';
import { NetworkUnavailableError } from '../network.js';
import type {
  PhoneMessage,
  RecipientScope,
  SandboxChatChange,
  SandboxGroupChange,
  SandboxPhoneChange,
  SandboxPhoneSettings,
  ScanScope,
} from '../sandbox-control.js';
import type { ClientFrame, ServerFrame } from './ws-protocol.js';
import { carriesMedia, declaredMediaSize, encodeError, isFinalEvent, MAX_CALL_FRAME_BYTES } from './ws-protocol.js';
import { DigestBuilder, withDigest, type SandboxMessage } from './media-digest.js';
import type { SandboxLink, SandboxOptions } from './world.js';
import { SandboxWorld } from './world.js';

export interface SandboxServerOptions extends SandboxOptions {
  /** Interface to listen on; loopback unless told otherwise, as the protocol has no authentication. */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
}

export interface SandboxServer {
  readonly port: number;
  close(): Promise<void>;
}

type Args = readonly unknown[];

function callLink(link: SandboxLink, op: string, a: Args): unknown {
  switch (op) {
    case 'sendMessage':
      // Only messages without media: those with media are taken from chunk frames (serveClient).
      return link.sendMessage(a[0] as SandboxMessage);
    case 'sendTyping':
      return link.sendTyping(a[0] as string, a[1] as number);
    case 'sendPresence':
      return link.sendPresence(a[0] as PresenceState, (a[1] ?? undefined) as string | undefined);
    case 'listGroups':
      return link.listGroups();
    case 'getGroup':
      return link.getGroup(a[0] as NetworkGroupId);
    case 'createGroup':
      return link.createGroup(a[0] as string, a[1] as PhoneNumber[]);
    case 'addParticipants':
      return link.addParticipants(a[0] as NetworkGroupId, a[1] as PhoneNumber[]);
    case 'updateGroup':
      return link.updateGroup(a[0] as NetworkGroupId, a[1] as GroupChanges);
    case 'changeParticipants':
      return link.changeParticipants(a[0] as NetworkGroupId, a[1] as PhoneNumber[], a[2] as ParticipantAction);
    case 'groupInvite':
      return link.groupInvite(a[0] as NetworkGroupId, a[1] === true);
    case 'joinGroup':
      return link.joinGroup(a[0] as string);
    case 'leaveGroup':
      return link.leaveGroup(a[0] as NetworkGroupId);
    case 'modifyChat':
      return link.modifyChat(a[0] as string, wireChatChange(a[1]), wireLastMessage(a[2]));
    case 'rejectCall':
      return link.rejectCall(a[0] as IncomingCall);
    case 'checkNumbers':
      return link.checkNumbers(a[0] as PhoneNumber[]);
    case 'listContacts':
      return link.listContacts();
    case 'getContact':
      return link.getContact(a[0] as PhoneNumber);
    case 'setBlocked':
      return link.setBlocked(a[0] as PhoneNumber, a[1] === true);
    case 'listBlocked':
      return link.listBlocked();
    case 'getProfile':
      return link.getProfile();
    case 'updateProfile':
      return link.updateProfile(a[0] as ProfileChanges);
    case 'setGroupPicture':
      return link.setGroupPicture(a[0] as NetworkGroupId, a[1] as PictureUpload);
    case 'logout':
      return link.logout();
    case 'requestPairingCode':
      return link.requestPairingCode(a[0] as PhoneNumber);
    default:
      throw new Error(`unknown operation ${op}`);
  }
}

// Scopes come over the wire: anything not of the expected shape is no scope, and the world refuses nothing more.
function scanScope(value: unknown): ScanScope | undefined {
  const ids = (value as { deviceIds?: unknown } | null | undefined)?.deviceIds;
  return Array.isArray(ids) ? { deviceIds: ids.filter((id): id is number => typeof id === 'number') } : undefined;
}

function recipientScope(value: unknown): RecipientScope | undefined {
  const session = (value as { session?: unknown } | null | undefined)?.session;
  return typeof session === 'string' ? { session } : undefined;
}

// A view is a string; a client that names none (or sends something else) acts in the shared view.
function optionalView(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function callControl(world: SandboxWorld, op: string, a: Args): unknown {
  switch (op) {
    case 'scan':
      return world.scan(a[0] as string, a[1] as PhoneNumber, scanScope(a[2]));
    case 'pair':
      return world.pair(a[0] as string, a[1] as PhoneNumber, scanScope(a[2]));
    case 'upsertPhone':
      return world.upsertPhone(a[0] as SandboxPhoneSettings, optionalView(a[1]));
    case 'getPhone':
      return world.getPhone(a[0] as PhoneNumber, optionalView(a[1]));
    case 'sendFromPhone':
      return world.sendFromPhone(
        a[0] as PhoneNumber,
        a[1] as PhoneNumber,
        a[2] as string | PhoneMessage,
        recipientScope(a[3]),
        optionalView(a[4]),
      );
    case 'changeFromPhone':
      return world.changeFromPhone(
        a[0] as PhoneNumber,
        a[1] as SandboxPhoneChange,
        recipientScope(a[2]) ?? { session: '' },
        optionalView(a[3]),
      );
    case 'callFromPhone':
      return world.callFromPhone(
        a[0] as PhoneNumber,
        (a[1] ?? {}) as { video?: unknown; group?: unknown },
        recipientScope(a[2]) ?? { session: '' },
        optionalView(a[3]),
      );
    case 'changeChatOnPhone':
      return world.changeChatOnPhone(
        a[0] as PhoneNumber,
        a[1] as string,
        (a[2] ?? {}) as SandboxChatChange,
        recipientScope(a[3]) ?? { session: '' },
        optionalView(a[4]),
      );
    case 'seedHistory':
      return world.seedHistory(
        a[0] as PhoneNumber,
        a[1] as PhoneNumber,
        (a[2] ?? []) as ReadonlyArray<{ text: string; from_me?: boolean; at?: string }>,
        optionalView(a[3]),
      );
    case 'readMessage':
      return world.readMessage(a[0] as PhoneNumber, a[1] as string, optionalView(a[2]));
    case 'createGroup':
      return world.createGroup(
        a[0] as string,
        a[1] as Array<{ phone: PhoneNumber; admin?: boolean }>,
        optionalView(a[2]),
      );
    case 'changeGroupFromPhone':
      return world.changeGroupFromPhone(
        a[0] as PhoneNumber,
        a[1] as NetworkGroupId,
        a[2] as SandboxGroupChange,
        optionalView(a[3]),
      );
    case 'disconnectDevice':
      return world.disconnectDevice(a[0] as number, a[1] as { logout: boolean });
    default:
      throw new Error(`unknown operation ${op}`);
  }
}

/** A `sendMessage` call whose media is arriving in chunk frames: only a running digest is kept. */
interface Upload {
  readonly cid: number;
  readonly message: { readonly id: string; readonly to: string; readonly content: object };
  readonly size: number;
  readonly digest: DigestBuilder;
}

/** Serves one client socket: its links live exactly as long as it does. */
function serveClient(world: SandboxWorld, socket: WebSocket): void {
  const links = new Map<number, SandboxLink>();
  const uploads = new Map<number, Upload>();
  const send = (frame: ServerFrame) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
  };
  const answer = (rid: number, run: () => unknown) => {
    let value: unknown;
    try {
      value = run();
    } catch (err) {
      send({ t: 'result', rid, ok: false, error: encodeError(err) });
      return;
    }
    send({ t: 'result', rid, ok: true, value: value ?? null });
  };
  const linkOf = (cid: number) => {
    const link = links.get(cid);
    if (!link) throw new NetworkUnavailableError();
    return link;
  };

  /** Media chunk frames; frames of a call already answered or aborted are ignored. */
  const media = (frame: Extract<ClientFrame, { t: 'chunk' | 'end' | 'abort' }>) => {
    const upload = uploads.get(frame.rid);
    if (upload === undefined) return;
    if (frame.t === 'abort') {
      uploads.delete(frame.rid);
    } else if (frame.t === 'chunk') {
      if (typeof frame.data !== 'string') throw new Error('a chunk frame carries base64 text');
      const bytes = Buffer.from(frame.data, 'base64');
      if (upload.digest.size + bytes.length > upload.size) {
        uploads.delete(frame.rid);
        answer(frame.rid, () => {
          throw new Error('more media bytes than the message declared');
        });
        return;
      }
      upload.digest.update(bytes);
    } else {
      uploads.delete(frame.rid);
      answer(frame.rid, () => {
        if (upload.digest.size !== upload.size) throw new Error('fewer media bytes than the message declared');
        return linkOf(upload.cid).sendMessage(withDigest(upload.message as SandboxMessage, upload.digest.digest()));
      });
    }
  };

  const handle = (frame: ClientFrame) => {
    if (frame.t === 'connect') {
      if (links.has(frame.cid)) return;
      const { cid } = frame;
      const link = world.connect(frame.options as ConnectOptions, (event) => {
        if (isFinalEvent(event)) links.delete(cid);
        send({ t: 'event', cid, event });
        // A history batch is taken once it is on the wire: the client's gateway holds it from there.
        if (event.type === 'history_messages') event.taken();
      });
      links.set(cid, link);
    } else if (frame.t === 'close') {
      links.get(frame.cid)?.close();
      links.delete(frame.cid);
    } else if (frame.t === 'chunk' || frame.t === 'end' || frame.t === 'abort') {
      media(frame);
    } else if (frame.t === 'control') {
      answer(frame.rid, () => callControl(world, frame.op, frame.args));
    } else if (frame.op === 'sendMessage' && carriesMedia(frame.args[0])) {
      const size = declaredMediaSize(frame.args[0]);
      // Refused at once when malformed or the device is not connected; otherwise answered after the last chunk.
      if (size === null || !links.has(frame.cid)) {
        answer(frame.rid, () => {
          if (size === null) throw new Error('media is declared by its size and sent in chunk frames');
          return linkOf(frame.cid);
        });
        return;
      }
      const message = frame.args[0] as Upload['message'];
      uploads.set(frame.rid, { cid: frame.cid, message, size, digest: new DigestBuilder() });
    } else {
      answer(frame.rid, () => callLink(linkOf(frame.cid), frame.op, frame.args));
    }
  };

  socket.on('message', (data: RawData) => {
    let frame: ClientFrame;
    try {
      frame = JSON.parse(data.toString()) as ClientFrame;
    } catch {
      socket.close(1003, 'frames must be JSON');
      return;
    }
    try {
      handle(frame);
    } catch (err) {
      // A malformed frame from one client must not take down the world every other client shares.
      console.error('sandbox server: bad frame: %s', (err as Error).message);
      socket.close(1008, 'malformed frame');
    }
  });
  socket.on('error', () => socket.terminate());
  socket.on('close', () => {
    for (const link of links.values()) link.close();
    links.clear();
    uploads.clear();
  });
}

/** Plain HTTP on the sandbox's port: `GET /health` only; everything else is the WebSocket protocol. */
function answerHttp(world: SandboxWorld, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/health') {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"not found"}');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'content-type': 'application/json', allow: 'GET' }).end('{"status":"method not allowed"}');
    return;
  }
  const { connections, replaced } = world.health();
  const replacedTotal = Object.values(replaced).reduce((sum, n) => sum + n, 0);
  const body = JSON.stringify({ status: 'ok', connections, replaced_total: replacedTotal, replaced });
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body);
}

export async function startSandboxServer(options: SandboxServerOptions): Promise<SandboxServer> {
  const world = new SandboxWorld(options);
  const http = createServer((req, res) => answerHttp(world, req, res));
  const wss = new WebSocketServer({ server: http, maxPayload: MAX_CALL_FRAME_BYTES });
  try {
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(options.port, options.host ?? '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    world.close();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    throw err;
  }
  wss.on('connection', (socket) => serveClient(world, socket));
  let closing: Promise<void> | null = null;
  return {
    port: (http.address() as AddressInfo).port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => {
          http.close(() => {
            world.close();
            resolve();
          });
          http.closeAllConnections();
        });
      });
      return closing;
    },
  };
}

/** A chat change as it travelled (JSON): its time read back into a Date. */
function wireChatChange(value: unknown): ChatChange {
  const change = (value ?? {}) as { archived?: boolean; pinned?: boolean; mutedUntil?: string | null };
  return {
    ...(change.archived === undefined ? {} : { archived: change.archived }),
    ...(change.pinned === undefined ? {} : { pinned: change.pinned }),
    ...(change.mutedUntil === undefined
      ? {}
      : { mutedUntil: change.mutedUntil === null ? null : new Date(change.mutedUntil) }),
  };
}

function wireLastMessage(value: unknown): ChatLastMessage | null {
  if (value === null || value === undefined) return null;
  const last = value as { id: string; fromMe: boolean; author?: string; at: string };
  return { ...last, at: new Date(last.at) };
}

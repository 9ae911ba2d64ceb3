/**
 * A scripted stand-in for a Baileys socket, at the edge of the outside world:
 * its event emitter is Baileys' own event buffer (so buffering and collapsing
 * behave as in production), its stanza stream a plain emitter, and its
 * methods record their calls and answer what the test scripted. Payloads are
 * built with Baileys' own protobuf classes. Not a test file itself.
 */
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import {
  makeEventBuffer,
  proto,
  type AnyMessageContent,
  type AuthenticationState,
  type GroupMetadata,
  type MiscMessageGenerationOptions,
  type WAMessage,
} from 'baileys';
import pino from 'pino';
import type { SocketFactory, SocketOptions, SocketPort } from '../../../src/network/whatsapp/socket-port.js';

const quiet = pino({ level: 'silent' });
const MEDIA_KEYS = ['image', 'video', 'audio', 'document'] as const;

/** A close error as Baileys makes them (a Boom: the code in `output.statusCode`). */
export function closeError(statusCode: number, message = 'Connection Failure'): Error {
  return Object.assign(new Error(message), { output: { statusCode } });
}

/** A request error as Baileys' group queries make them (a Boom: the code in `data`). */
export function queryError(code: number, message: string): Error {
  return Object.assign(new Error(message), { data: code, output: { statusCode: 500 } });
}

export class FakeSocket implements SocketPort {
  readonly ev = makeEventBuffer(quiet);
  readonly stanzas = new EventEmitter();
  /** Whether the stream is open, as the library's `ws.isOpen` says: from the start until `end` or `streamClosed`. */
  streamOpen = true;
  readonly ws = Object.defineProperty(this.stanzas, 'isOpen', {
    get: () => this.streamOpen,
  }) as unknown as SocketPort['ws'];
  readonly user = undefined;
  /** The library's LID mapping store: numbers behind LIDs (`lid` user → phone JID), as the test scripts them. */
  readonly lids = new Map<string, string>();
  readonly signalRepository = {
    lidMapping: {
      getPNForLID: async (lid: string) => this.lids.get(lid.split('@')[0]!.split(':')[0]!) ?? null,
      getLIDForPN: async (pn: string) => {
        const user = pn.split('@')[0]!.split(':')[0]!;
        for (const [lid, known] of this.lids) if (known.split('@')[0] === user) return `${lid}@lid`;
        return null;
      },
      storeLIDPNMappings: async (pairs: ReadonlyArray<{ lid: string; pn: string }>) => {
        for (const { lid, pn } of pairs) this.lids.set(lid.split('@')[0]!.split(':')[0]!, pn);
      },
    },
  };
  readonly calls: Array<{ method: string; args: unknown[] }> = [];
  ended = false;
  /** What `sendMessage` does; by default it "writes the stanza" and answers the message as Baileys does. */
  onSend: (jid: string, content: AnyMessageContent, options: MiscMessageGenerationOptions) => Promise<void> =
    async () => undefined;
  groups: Record<string, GroupMetadata> = {};
  addResults: Array<{ status: string; jid: string }> = [];
  groupFailure: Error | null = null;
  numbers: Array<{ jid: string; exists: boolean }> = [];
  /** Called as each chunk of media is read, with the bytes read so far. */
  onUploadChunk: (read: number) => void = () => undefined;
  /** Media read by sends, in order: the size of each chunk read from the stream, and the bytes. */
  readonly uploads: Array<{ chunkSizes: number[]; bytes: Buffer }> = [];
  /** Participants WhatsApp leaves out when a group is created. */
  refusedAtCreate = new Set<string>();

  constructor(readonly options: SocketOptions) {}

  get auth(): AuthenticationState {
    return this.options.auth;
  }

  private record(method: string, args: unknown[]): void {
    this.calls.push({ method, args });
  }

  connection(update: Parameters<SocketPort['ev']['emit']>[1] & object): void {
    this.ev.emit('connection.update', update as never);
  }

  close(statusCode: number, message?: string): void {
    this.connection({
      connection: 'close',
      lastDisconnect: { error: closeError(statusCode, message), date: new Date() },
    });
  }

  /** The phone confirms the pairing: the credentials name the account, as Baileys' pair-success does. */
  pairSuccess(meId: string): void {
    this.auth.creds.me = { id: meId, lid: '123456789@lid' };
    this.ev.emit('creds.update', { me: this.auth.creds.me });
    this.connection({ isNewLogin: true });
  }

  ack(id: string, error?: string): void {
    this.stanzas.emit('CB:ack,class:message', {
      tag: 'ack',
      attrs: { id, class: 'message', ...(error ? { error } : {}) },
    });
  }

  sendMessage: SocketPort['sendMessage'] = async (jid, content, options = {}) => {
    this.record('sendMessage', [jid, content, options]);
    await this.upload(content);
    await this.onSend(jid, content, options);
    return proto.WebMessageInfo.fromObject({
      key: { remoteJid: jid, fromMe: true, id: options.messageId ?? 'generated' },
      message: 'text' in content ? { conversation: String(content.text) } : { conversation: '(media)' },
    }) as WAMessage;
  };

  /**
   * Reads a media message's stream as Baileys does (once, chunk by chunk, before the stanza goes out),
   * keeping the chunk sizes and the bytes. A media upload not given as a stream fails the send.
   */
  private async upload(content: AnyMessageContent): Promise<void> {
    const key = MEDIA_KEYS.find((k) => k in content);
    if (key === undefined) return;
    const media = (content as Record<string, unknown>)[key];
    if (typeof media !== 'object' || media === null || !('stream' in media) || !(media.stream instanceof Readable)) {
      throw new Error('media must be handed over as a stream');
    }
    const chunks: Buffer[] = [];
    for await (const chunk of media.stream) {
      chunks.push(Buffer.from(chunk as Uint8Array));
      this.onUploadChunk(chunks.reduce((sum, c) => sum + c.length, 0));
    }
    this.uploads.push({ chunkSizes: chunks.map((c) => c.length), bytes: Buffer.concat(chunks) });
  }

  /** Sends a message built by the caller (the native interactive form); answers the id, as Baileys does. */
  relayMessage: SocketPort['relayMessage'] = async (jid, message, options) => {
    this.record('relayMessage', [jid, message, options]);
    await this.onSend(jid, { text: '(relayed)' }, { messageId: options.messageId });
    return options.messageId ?? 'generated';
  };

  requestPairingCode: SocketPort['requestPairingCode'] = async (phone) => {
    this.record('requestPairingCode', [phone]);
    // As Baileys does: the credentials name the number (no device yet) before any phone confirmed anything.
    this.auth.creds.me = { id: `${phone}@s.whatsapp.net`, name: '~' };
    this.auth.creds.pairingCode = 'ABCD2345';
    this.ev.emit('creds.update', { me: this.auth.creds.me, pairingCode: 'ABCD2345' });
    return 'ABCD2345';
  };

  logout: SocketPort['logout'] = async () => {
    this.record('logout', []);
    this.close(401, 'Intentional Logout');
  };

  end: SocketPort['end'] = async (error) => {
    this.record('end', [error]);
    this.ended = true;
    this.streamOpen = false;
    // Like Baileys, ending emits a close of its own: the connector must not pass it on.
    this.close(428, 'Connection Closed');
  };

  private groupCall<T>(method: string, args: unknown[], answer: () => T): Promise<T> {
    this.record(method, args);
    if (this.groupFailure !== null) return Promise.reject(this.groupFailure);
    return Promise.resolve(answer());
  }

  groupFetchAllParticipating: SocketPort['groupFetchAllParticipating'] = () =>
    this.groupCall('groupFetchAllParticipating', [], () => {
      // Like Baileys: fetching all groups also announces each of them as an update.
      this.ev.emit(
        'groups.update',
        Object.values(this.groups).map((g) => ({ id: g.id, subject: g.subject })),
      );
      return { ...this.groups };
    });

  groupMetadata: SocketPort['groupMetadata'] = (jid) =>
    this.groupCall('groupMetadata', [jid], () => {
      const group = this.groups[jid];
      if (group === undefined) throw queryError(404, 'item-not-found');
      return group;
    });

  groupCreate: SocketPort['groupCreate'] = (subject, participants) =>
    this.groupCall('groupCreate', [subject, participants], () => {
      const id = `1203630000000${Object.keys(this.groups).length}@g.us`;
      const group = {
        id,
        subject,
        owner: undefined,
        participants: participants
          .filter((jid) => !this.refusedAtCreate.has(jid))
          .map((jid) => ({ id: jid, admin: null })),
      } as GroupMetadata;
      this.groups[id] = group;
      return group;
    });

  groupParticipantsUpdate: SocketPort['groupParticipantsUpdate'] = (jid, participants, action) =>
    this.groupCall('groupParticipantsUpdate', [jid, participants, action], () =>
      this.addResults.map((r) => ({ ...r, content: { tag: 'participant', attrs: { jid: r.jid } } })),
    );

  groupUpdateSubject: SocketPort['groupUpdateSubject'] = (jid, subject) =>
    this.groupCall('groupUpdateSubject', [jid, subject], () => {
      const group = this.groups[jid];
      if (group !== undefined) group.subject = subject;
    });

  groupUpdateDescription: SocketPort['groupUpdateDescription'] = (jid, description) =>
    this.groupCall('groupUpdateDescription', [jid, description], () => {
      const group = this.groups[jid];
      if (group !== undefined) group.desc = description;
    });

  /** Settings queries the network refuses, by the tag or setting they send, with the error to refuse with. */
  refuseSetting = new Map<string, Error>();

  groupSettingUpdate: SocketPort['groupSettingUpdate'] = (jid, setting) =>
    this.groupCall('groupSettingUpdate', [jid, setting], () => {
      const refusal = this.refuseSetting.get(setting);
      if (refusal !== undefined) throw refusal;
      const group = this.groups[jid];
      if (group === undefined) return;
      if (setting === 'announcement' || setting === 'not_announcement') group.announce = setting === 'announcement';
      if (setting === 'locked' || setting === 'unlocked') group.restrict = setting === 'locked';
    });

  groupToggleEphemeral: SocketPort['groupToggleEphemeral'] = (jid, seconds) =>
    this.groupCall('groupToggleEphemeral', [jid, seconds], () => {
      const refusal = this.refuseSetting.get('ephemeral');
      if (refusal !== undefined) throw refusal;
      const group = this.groups[jid];
      if (group !== undefined) group.ephemeralDuration = seconds === 0 ? undefined : seconds;
    });

  /** Invite codes by group, as the test scripts them (a revoke makes a new one); a code no group has is refused. */
  readonly invites = new Map<string, string>();
  /** The group `groupAcceptInvite` joins (the test adds the device to its metadata itself when it wants that). */
  inviteGroups = new Map<string, string>();

  groupInviteCode: SocketPort['groupInviteCode'] = (jid) =>
    this.groupCall('groupInviteCode', [jid], () => this.invites.get(jid));

  groupRevokeInvite: SocketPort['groupRevokeInvite'] = (jid) =>
    this.groupCall('groupRevokeInvite', [jid], () => {
      const code = `revoked${this.invites.size}${Date.now().toString(36)}`;
      this.invites.set(jid, code);
      return code;
    });

  groupAcceptInvite: SocketPort['groupAcceptInvite'] = (code) =>
    this.groupCall('groupAcceptInvite', [code], () => {
      const jid = this.inviteGroups.get(code);
      if (jid === undefined) throw queryError(406, 'not-acceptable');
      return jid;
    });

  groupLeave: SocketPort['groupLeave'] = (jid) =>
    this.groupCall('groupLeave', [jid], () => {
      delete this.groups[jid];
    });

  /** Set to make `chatModify` refuse (an app-state patch the server did not take). */
  chatModifyFails: Error | null = null;

  chatModify: SocketPort['chatModify'] = async (mod, jid) => {
    this.record('chatModify', [mod, jid]);
    if (this.chatModifyFails !== null) throw this.chatModifyFails;
  };

  rejectCall: SocketPort['rejectCall'] = async (callId, callFrom) => {
    this.record('rejectCall', [callId, callFrom]);
  };

  onWhatsApp: SocketPort['onWhatsApp'] = async (...phones) => {
    this.record('onWhatsApp', phones);
    return this.numbers;
  };

  readMessages: SocketPort['readMessages'] = async (keys) => {
    this.record('readMessages', [keys]);
  };

  sendPresenceUpdate: SocketPort['sendPresenceUpdate'] = async (type, jid) => {
    this.record('sendPresenceUpdate', [type, jid]);
  };

  /**
   * What the sender's phone answers a media re-upload request: the new copy's path, or an error (as the library
   * throws it). By default it never answers.
   */
  onMediaRetry: (message: WAMessage) => Promise<{ directPath: string } | Error> = () => new Promise(() => undefined);

  /** As the library: asks, then writes the new copy's path and URL into the message's media and answers it. */
  updateMediaMessage: SocketPort['updateMediaMessage'] = async (message) => {
    this.record('updateMediaMessage', [structuredClone(message)]);
    const answer = await this.onMediaRetry(message);
    if (answer instanceof Error) throw answer;
    const content = Object.values(message.message ?? {})[0] as { directPath?: string; url?: string };
    content.directPath = answer.directPath;
    content.url = `https://mmg.whatsapp.net${answer.directPath}`;
    return message;
  };
}

/** A factory that hands out fake sockets and remembers them in order. */
export class FakeWhatsApp {
  readonly sockets: FakeSocket[] = [];
  readonly factory: SocketFactory = (options) => {
    const socket = new FakeSocket(options);
    this.sockets.push(socket);
    return socket;
  };

  /** The n-th socket made (0-based), waiting for it. */
  async socket(n = 0, timeoutMs = 5000): Promise<FakeSocket> {
    const deadline = Date.now() + timeoutMs;
    while (this.sockets[n] === undefined) {
      if (Date.now() > deadline) throw new Error(`no socket #${n} was made`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return this.sockets[n]!;
  }
}

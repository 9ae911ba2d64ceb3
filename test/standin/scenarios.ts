// What the stand-in's own tests do with the pinned library as the client: each scenario plays one protocol
// feature through and returns what it observed; test/standin/*.unit.test.ts assert on it.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { downloadMediaMessage, type WAMessage, type WASocket } from 'baileys';
import type { Standin } from '../../standin/server.js';
import { connect, control, newDevice, nextUpdate, pairByQr } from './client.js';

let watchNext: ((socket: WASocket) => void) | undefined;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const statusOf = (e: any) => e?.lastDisconnect?.error?.output?.statusCode;

function nextMessage(socket: WASocket, test: (m: WAMessage) => boolean = () => true): Promise<WAMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no message in time')), 15_000);
    socket.ev.on('messages.upsert', ({ messages }) => {
      for (const m of messages)
        if (!m.key.fromMe && m.message && test(m)) {
          clearTimeout(timer);
          resolve(m);
        }
    });
  });
}

function statuses(socket: WASocket): Map<string, number[]> {
  const seen = new Map<string, number[]>();
  socket.ev.on('messages.update', (updates) => {
    for (const { key, update } of updates)
      if (update.status != null) seen.set(key.id ?? '', [...(seen.get(key.id ?? '') ?? []), update.status]);
  });
  return seen;
}

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function inboxOf(standin: Standin, phone: string, id: string) {
  return until(
    async () => (await control(standin, 'GET', `/control/phones/${phone}`)).body.inbox.find((m: any) => m.id === id),
    `${phone} to receive ${id}`,
  );
}

/** A small file server for media the phones send (the control interface takes a URL). */
async function files(bytes: Buffer, type: string) {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': type }).end(bytes));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as any).port}/file`,
    close: () => new Promise((r) => server.close(r)),
  };
}

export const scenarios: Record<string, (standin: Standin) => Promise<unknown>> = {
  async 'untrusted-root'(standin) {
    // The library's own certificate check: does it go on with a chain made by another root?
    const socket = connect({ ...standin, root_key: Buffer.alloc(32, 9).toString('base64') }, newDevice());
    const update = await nextUpdate(socket, (u) => typeof u.qr === 'string' || u.connection === 'close');
    socket.end(undefined);
    return { qrShown: typeof update.qr === 'string', closed: update.connection === 'close' };
  },

  async qr(standin) {
    const before = (await control(standin, 'GET', '/control/stats')).body;
    await control(standin, 'POST', '/control/phones', { phone: '15550100009' });
    const device = newDevice();
    const history = new Promise<any>((resolve) => {
      // The sync arrives on the socket opened after the 515: watch every socket this device opens.
      const watch = (s: WASocket) => s.ev.on('messaging-history.set', resolve);
      watchNext = watch;
    });
    const { socket } = await pairByQr(standin, '15550100001', device, (s) => watchNext?.(s));
    const synced = await history;
    const phone = (await control(standin, 'GET', '/control/phones/15550100001')).body;
    const after = (await control(standin, 'GET', '/control/stats')).body;
    const closed = nextUpdate(socket, (u) => u.connection === 'close');
    const unlink = (await control(standin, 'POST', '/control/phones/15550100001/unlink', {})).body;
    const unlinkedWith = statusOf(await closed);
    const again = connect(standin, device);
    const relogin = statusOf(await nextUpdate(again, (u) => u.connection === 'close'));
    const mapping = await socket.signalRepository.lidMapping.getLIDForPN('15550100009@s.whatsapp.net');
    return {
      me: device.creds.me,
      history: { mappings: synced.lidPnMappings?.length ?? 0, mapping },
      phone,
      logins: after.logins - before.logins,
      unlink,
      unlinkedWith,
      relogin,
      linkedAfter: (await control(standin, 'GET', '/control/phones/15550100001')).body.linked_devices,
    };
  },

  async code(standin) {
    const device = newDevice();
    const first = connect(standin, device);
    await nextUpdate(first, (u) => typeof u.qr === 'string');
    const code = await first.requestPairingCode('15550100002');
    const closed = nextUpdate(first, (u) => u.connection === 'close');
    const wrong = await control(standin, 'POST', '/control/pair', { code: 'ZZZZZZZZ', phone: '15550100002' });
    const right = await control(standin, 'POST', '/control/pair', { code, phone: '15550100002' });
    const restart = statusOf(await closed);
    const socket = connect(standin, device);
    await nextUpdate(socket, (u) => u.connection === 'open');
    socket.end(undefined);
    return { wrong, right, restart, me: device.creds.me };
  },

  async faults(standin) {
    const { device, socket } = await pairByQr(standin, '15550100003');
    const dropped = nextUpdate(socket, (u) => u.connection === 'close');
    const drop = (await control(standin, 'POST', '/control/drop', { code: 503 })).body;
    const droppedWith = statusOf(await dropped);
    await control(standin, 'POST', '/control/faults', { restart_loop: true });
    const looped = statusOf(await nextUpdate(connect(standin, device), (u) => u.connection === 'close'));
    await control(standin, 'POST', '/control/faults', {});
    const resumed = connect(standin, device);
    await nextUpdate(resumed, (u) => u.connection === 'open');
    let unknownIq = '';
    try {
      await resumed.query({
        tag: 'iq',
        attrs: { to: 's.whatsapp.net', type: 'get', xmlns: 'no:such:feature' },
        content: [{ tag: 'x', attrs: {} }],
      });
    } catch (error) {
      unknownIq = String(error);
    }
    resumed.end(undefined);
    return { drop, droppedWith, looped, unknownIq };
  },

  async messages(standin) {
    const { socket } = await pairByQr(standin, '15550100010');
    const seen = statuses(socket);
    const sent = await socket.sendMessage('15550100011@s.whatsapp.net', { text: 'hello phone' });
    const id = sent!.key.id!;
    const received = await inboxOf(standin, '15550100011', id);
    await until(() => (seen.get(id)?.includes(3) ? true : undefined), 'the delivery receipt');
    const read = (await control(standin, 'POST', '/control/phones/15550100011/read', { message_id: id })).body;
    await until(() => (seen.get(id)?.includes(4) ? true : undefined), 'the read receipt');
    const incoming = nextMessage(socket, (m) => m.message?.conversation === 'hello device');
    const { id: phoneId } = (
      await control(standin, 'POST', '/control/phones/15550100011/messages', {
        to: '15550100010',
        text: 'hello device',
      })
    ).body;
    const m = await incoming;
    const phoneSent = await until(async () => {
      const s = (await control(standin, 'GET', '/control/phones/15550100011')).body.sent.find(
        (x: any) => x.id === phoneId,
      );
      return s?.delivered_at ? s : undefined;
    }, 'the device to acknowledge delivery');
    const lidOnly = nextMessage(socket, (x) => x.message?.conversation === 'from my LID');
    await control(standin, 'POST', '/control/phones/15550100012/messages', {
      to: '15550100010',
      text: 'from my LID',
      lid: true,
    });
    const l = await lidOnly;
    socket.end(undefined);
    return {
      received,
      statuses: seen.get(id),
      read,
      incoming: { key: m.key, pushName: m.pushName },
      phoneSent,
      lidOnly: l.key,
    };
  },

  async media(standin) {
    const { socket } = await pairByQr(standin, '15550100020');
    const bytes = Buffer.from(`\x89PNG\r\n\x1a\n${'stand-in media '.repeat(200)}`, 'latin1');
    const out: Record<string, unknown> = { sha: sha(bytes) };
    const kinds = {
      image: { image: bytes, caption: 'an image' },
      document: { document: bytes, mimetype: 'application/pdf', fileName: 'a.pdf' },
      audio: { audio: bytes, mimetype: 'audio/ogg' },
      video: { video: bytes },
      sticker: { sticker: bytes },
    } as const;
    for (const [kind, content] of Object.entries(kinds)) {
      const sent = await socket.sendMessage('15550100021@s.whatsapp.net', content as any);
      out[kind] = await inboxOf(standin, '15550100021', sent!.key.id!);
    }
    const server = await files(bytes, 'image/png');
    const incoming = nextMessage(socket, (m) => m.message?.imageMessage != null);
    await control(standin, 'POST', '/control/phones/15550100021/messages', {
      to: '15550100020',
      image: { url: server.url },
      caption: 'from the phone',
    });
    const m = await incoming;
    out.downloaded = sha((await downloadMediaMessage(m, 'buffer', {})) as Buffer);
    out.caption = m.message?.imageMessage?.caption;
    await server.close();
    socket.end(undefined);
    return out;
  },

  async groups(standin) {
    const { socket } = await pairByQr(standin, '15550100030');
    const upserted = new Promise<any>((resolve) => socket.ev.on('groups.upsert', (g) => resolve(g[0])));
    const { id } = (
      await control(standin, 'POST', '/control/groups', {
        subject: 'Team',
        members: ['15550100031', '15550100030', '15550100032'],
      })
    ).body;
    const created = await upserted;
    const participating = Object.keys(await socket.groupFetchAllParticipating());
    const sent = await socket.sendMessage(id, { text: 'hello group' });
    const atPhones = [
      await inboxOf(standin, '15550100031', sent!.key.id!),
      await inboxOf(standin, '15550100032', sent!.key.id!),
    ];
    const incoming = nextMessage(socket, (m) => m.key.remoteJid === id);
    await control(standin, 'POST', '/control/phones/15550100032/messages', { to: id, text: 'hello from a member' });
    const m = await incoming;
    const changed = new Promise<any>((resolve) => socket.ev.on('group-participants.update', resolve));
    const added = await socket.groupParticipantsUpdate(id, ['15550100033@s.whatsapp.net'], 'add');
    const update = await changed;
    const removedNotice = new Promise<any>((resolve) =>
      socket.ev.on('group-participants.update', (u) => u.action === 'remove' && resolve(u)),
    );
    const removed = await socket.groupParticipantsUpdate(id, ['15550100031@s.whatsapp.net'], 'remove');
    const removal = await removedNotice;
    const metadata = await socket.groupMetadata(id);
    socket.end(undefined);
    return {
      id,
      created: { id: created.id, subject: created.subject, size: created.participants.length },
      participating,
      atPhones,
      incoming: { text: m.message?.conversation, participant: m.key.participant, participantAlt: m.key.participantAlt },
      added: added.map((a) => a.status),
      update: { action: update.action },
      removed: removed.map((a) => a.status),
      removal: { action: removal.action },
      size: metadata.participants.length,
    };
  },
};

// Issue 12 (what the seam carries after issue 11, on WhatsApp) and docs/internals.md, Whatspie compatibility: the whole gateway
// over the WhatsApp connector, its Baileys socket the scripted fake. A restart drops the socket and
// opens a new one on the same credentials; a group JID, group settings, mentions and a reply reach
// the socket as Baileys needs them; a setting WhatsApp refuses is a 400 naming it.
import { proto, type WAMessage } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNetworkId } from '../../../src/network/whatsapp/ids.js';
import { noStoreAvailable, type TestGateway } from '../../helpers/gateway.js';
import { waitForDevice } from '../../helpers/pairing.js';
import { waitFor } from '../../helpers/wait.js';
import { queryError, type FakeSocket, type FakeWhatsApp } from './fake-socket.js';
import { pairedDevice, startWhatsAppGateway } from './paired-gateway.js';

const KEYS = { current: Buffer.alloc(32, 0x24), previous: [] };
const PHONE = '4915100000071';
const FRIEND = '4917600000072';
const GROUP = '120363000000000071@g.us';
const SLOW = { timeoutMs: 10_000 };

describe.skipIf(noStoreAvailable)('the gateway on WhatsApp (scripted socket)', () => {
  let gw: TestGateway;
  let wa: FakeWhatsApp;
  let deviceId: number;
  let socket: FakeSocket;

  /** Every send is acknowledged by the server right away. */
  function acking(s: FakeSocket): FakeSocket {
    s.onSend = async (_jid, _content, options) => {
      setImmediate(() => s.ack(options.messageId!));
    };
    return s;
  }

  beforeAll(async () => {
    const at = await startWhatsAppGateway(KEYS, { sendIntervalMs: 0 });
    ({ gw, wa } = at);
    ({ id: deviceId, socket } = await pairedDevice(at, PHONE, {
      prepare: (s) => {
        acking(s);
        s.groups[GROUP] = {
          id: GROUP,
          subject: 'Team',
          owner: undefined,
          participants: [
            { id: `${PHONE}@s.whatsapp.net`, admin: 'superadmin' },
            { id: `${FRIEND}@s.whatsapp.net`, admin: null },
          ],
        };
      },
    }));
  });
  afterAll(() => gw?.close());

  async function syncedGroup() {
    const list = await waitFor(
      async () => (await gw.request('GET', `/groups?device=${PHONE}`)).body.data as Array<{ jid: string }>,
      (groups) => groups.some((g) => g.jid === GROUP),
      { what: 'the group synced', ...SLOW },
    );
    return list.find((g) => g.jid === GROUP)!;
  }

  async function sentStatus(id: string) {
    return waitFor(
      async () => (await gw.request('GET', `/messages/${id}`)).body.data.status as string,
      (status) => status === 'sent',
      { what: `message ${id} sent`, ...SLOW },
    );
  }

  it('PUT /groups/{jid} carries the settings out as WhatsApp queries and shows them', async () => {
    await syncedGroup();
    const res = await gw.request('PUT', `/groups/${GROUP}`, {
      permissions: { only_admins_can_send: true },
      disappearing_messages: { enabled: true, duration: '7d' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      jid: GROUP,
      title: 'Team',
      permissions: { only_admins_can_send: true, only_admins_can_edit: false },
      disappearing_messages: { enabled: true, duration: '7d' },
    });
    const queries = socket.calls
      .filter((c) => c.method === 'groupSettingUpdate' || c.method === 'groupToggleEphemeral')
      .map((c) => [c.method, ...c.args]);
    expect(queries).toEqual([
      ['groupToggleEphemeral', GROUP, 604_800],
      ['groupSettingUpdate', GROUP, 'announcement'],
    ]);
  });

  it('a setting WhatsApp refuses is 400 Group setting refused naming it, never a silent 200', async () => {
    socket.refuseSetting.set('locked', queryError(406, 'not-acceptable'));
    try {
      const res = await gw.request('PUT', `/groups/${GROUP}`, {
        subject: 'Renamed',
        permissions: { only_admins_can_edit: true },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 400,
        status: 400,
        message: 'Group setting refused',
        error: 'changed before the refusal: subject',
        errors: { 'permissions.only_admins_can_edit': ['refused by the network (406)'] },
      });
      // What WhatsApp did change is shown.
      const group = await gw.request('GET', `/groups/${GROUP}`);
      expect(group.body.data).toMatchObject({ subject: 'Renamed', permissions: { only_admins_can_edit: false } });
    } finally {
      socket.refuseSetting.clear();
    }
  });

  it('a message to a group JID with mentions, replying to an incoming message, reaches the socket', async () => {
    // A member writes in the group; the device replies to it, mentioning them.
    socket.ev.emit('messages.upsert', {
      type: 'notify',
      messages: [
        proto.WebMessageInfo.fromObject({
          key: { remoteJid: GROUP, fromMe: false, id: 'INCOMING0071', participant: `${FRIEND}@s.whatsapp.net` },
          message: { conversation: 'who is in?' },
          messageTimestamp: 1_760_000_000,
        }) as WAMessage,
      ],
    });
    await waitFor(
      async () => (await gw.request('GET', '/messages?direction=incoming')).body.data as unknown[],
      (list) => list.length > 0,
      { what: 'the incoming message stored', ...SLOW },
    );
    const res = await gw.request('POST', '/messages', {
      device: PHONE,
      receiver: GROUP,
      type: 'chat',
      params: { text: 'me @4917600000072', mentions: [FRIEND], quotedMessageId: 'INCOMING0071' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      receiver: GROUP,
      params: { text: 'me @4917600000072', mentions: [FRIEND], quotedMessageId: 'INCOMING0071' },
    });
    await sentStatus(res.body.data.id);
    const call = socket.calls.find((c) => c.method === 'sendMessage' && c.args[0] === GROUP)!;
    const [, content, options] = call.args as [string, { mentions?: string[] }, Record<string, any>];
    expect(content).toEqual({ text: 'me @4917600000072', mentions: [`${FRIEND}@s.whatsapp.net`], linkPreview: null });
    expect(options).toMatchObject({
      messageId: toNetworkId(res.body.data.id),
      quoted: {
        key: { remoteJid: GROUP, fromMe: false, id: 'INCOMING0071', participant: `${FRIEND}@s.whatsapp.net` },
        message: { conversation: 'who is in?' },
      },
    });
  });

  it('POST /devices/{id}/restart drops the Baileys socket and opens a new one on the same credentials', async () => {
    const before = wa.sockets.length;
    const old = socket;
    const res = await gw.request('POST', `/devices/${deviceId}/restart`);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Device restarting');
    const fresh = acking(await wa.socket(before, 10_000));
    // The old socket was ended; the new one runs on the stored session, no QR, no pairing.
    expect(old.ended).toBe(true);
    expect(fresh.auth.creds.me?.id).toBe(`${PHONE}:4@s.whatsapp.net`);
    fresh.groups = old.groups;
    fresh.connection({ connection: 'open' });
    await waitForDevice(gw, deviceId, (d) => d.connected === true && d.paired_status === 'PAIRED', 'back');
    socket = fresh;
    const sent = await gw.request('POST', '/messages', {
      device: PHONE,
      receiver: FRIEND,
      type: 'chat',
      params: { text: 'after restart' },
    });
    expect(sent.status).toBe(200);
    await sentStatus(sent.body.data.id);
    expect(fresh.calls.some((c) => c.method === 'sendMessage')).toBe(true);
    expect(old.calls.filter((c) => c.method === 'sendMessage' && c.args[0] === `${FRIEND}@s.whatsapp.net`)).toEqual([]);
  });
});

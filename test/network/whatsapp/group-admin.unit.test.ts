// The WhatsApp side of group administration (src/network/whatsapp/group-admin.ts) against a socket that answers
// as the library does: members addressed as the group names them (by LID in LID groups), the creator refused
// without a round trip, the network's per-participant statuses read, invite codes, joining and leaving.
import type { GroupMetadata } from 'baileys';
import { describe, expect, it } from 'vitest';
import { NetworkForbiddenError, NetworkNotFoundError } from '../../../src/network/network.js';
import * as admin from '../../../src/network/whatsapp/group-admin.js';
import type { SocketPort } from '../../../src/network/whatsapp/socket-port.js';
import { queryError } from './fake-socket.js';

const GROUP = '120363000000000001@g.us';
const ME = '4915100000001';
const FRIEND = '4917600000002';
const OTHER = '4917600000003';

const metadata: GroupMetadata = {
  id: GROUP,
  subject: 'Team',
  owner: undefined,
  participants: [
    { id: `${ME}@s.whatsapp.net`, admin: 'superadmin' },
    { id: '55443322@lid', phoneNumber: `${FRIEND}@s.whatsapp.net`, admin: 'admin' },
    { id: `${OTHER}@s.whatsapp.net`, admin: null },
  ],
};

/** One participant's line of the library's answer. */
const line = (jid: string, status: string) => ({ jid, status, content: { tag: 'participant', attrs: { jid } } });

function socket(answers: Partial<SocketPort>): { port: SocketPort; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const port = new Proxy(answers, {
    get(target, name: string) {
      const fn = (target as Record<string, unknown>)[name];
      if (typeof fn !== 'function') return fn;
      return (...args: unknown[]) => {
        calls.push([name, ...args]);
        return (fn as (...a: unknown[]) => unknown)(...args);
      };
    },
  }) as SocketPort;
  return { port, calls };
}

describe('WhatsApp group administration', () => {
  it('asks only about members, each by the address the group uses, and reads each status', async () => {
    const { port, calls } = socket({
      groupParticipantsUpdate: async (_jid, jids) =>
        jids.map((jid) => line(jid, jid === '55443322@lid' ? '200' : '403')),
    });
    const outcomes = await admin.changeParticipants(
      port,
      metadata,
      [FRIEND, OTHER, '4917699999999', 'abc', ME],
      'remove',
    );
    expect(outcomes).toEqual([
      { phone: FRIEND, ok: true },
      { phone: OTHER, ok: false, code: 'FORBIDDEN' },
      { phone: '4917699999999', ok: false, code: 'NOT_A_MEMBER' },
      { phone: 'abc', ok: false, code: 'INVALID_NUMBER' },
      { phone: ME, ok: false, code: 'FORBIDDEN' },
    ]);
    expect(calls).toEqual([['groupParticipantsUpdate', GROUP, ['55443322@lid', `${OTHER}@s.whatsapp.net`], 'remove']]);
  });

  it.each([
    ['200', { ok: true }],
    ['404', { ok: false, code: 'NOT_A_MEMBER' }],
    ['400', { ok: false, code: 'INVALID_NUMBER' }],
    ['401', { ok: false, code: 'FORBIDDEN' }],
  ])('status %s', async (status, outcome) => {
    const { port } = socket({ groupParticipantsUpdate: async (_jid, jids) => jids.map((jid) => line(jid, status)) });
    expect(await admin.changeParticipants(port, metadata, [OTHER], 'promote')).toEqual([{ phone: OTHER, ...outcome }]);
  });

  it('the creator may be promoted (nothing to do) but never demoted or removed; nothing asked when nobody is left', async () => {
    const { port, calls } = socket({
      groupParticipantsUpdate: async (_jid, jids) => jids.map((jid) => line(jid, '200')),
    });
    expect(await admin.changeParticipants(port, metadata, [ME], 'demote')).toEqual([
      { phone: ME, ok: false, code: 'FORBIDDEN' },
    ]);
    expect(calls).toEqual([]);
    expect(await admin.changeParticipants(port, metadata, [ME], 'promote')).toEqual([{ phone: ME, ok: true }]);
  });

  it('a request refused as a whole: 403 is NetworkForbiddenError, 404 NetworkNotFoundError', async () => {
    for (const [code, kind] of [
      [403, NetworkForbiddenError],
      [404, NetworkNotFoundError],
    ] as const) {
      const { port } = socket({
        groupParticipantsUpdate: async () => {
          throw queryError(code, 'refused');
        },
        groupInviteCode: async () => {
          throw queryError(code, 'refused');
        },
        groupLeave: async () => {
          throw queryError(code, 'refused');
        },
      });
      await expect(admin.changeParticipants(port, metadata, [OTHER], 'remove')).rejects.toBeInstanceOf(kind);
      await expect(admin.groupInvite(port, GROUP, false)).rejects.toBeInstanceOf(kind);
      await expect(admin.leaveGroup(port, GROUP)).rejects.toBeInstanceOf(kind);
    }
  });

  it('invite codes: read, or revoked for a new one', async () => {
    const { port, calls } = socket({
      groupInviteCode: async () => 'AbCdEfGhIjKlMnOpQrStUv',
      groupRevokeInvite: async () => 'ZyXwVuTsRqPoNmLkJiHgFe',
    });
    expect(await admin.groupInvite(port, GROUP, false)).toBe('AbCdEfGhIjKlMnOpQrStUv');
    expect(await admin.groupInvite(port, GROUP, true)).toBe('ZyXwVuTsRqPoNmLkJiHgFe');
    expect(calls.map((c) => c[0])).toEqual(['groupInviteCode', 'groupRevokeInvite']);
  });

  it('joining: the group the code opens, read back; a code the network does not accept is NetworkNotFoundError', async () => {
    const { port } = socket({
      groupAcceptInvite: async (code) => {
        if (code === 'good') return GROUP;
        throw queryError(code === 'gone' ? 410 : 406, 'not-acceptable');
      },
      groupMetadata: async () => metadata,
    });
    const group = await admin.joinGroup(port, 'good');
    expect(group).toMatchObject({ id: GROUP, subject: 'Team' });
    expect(group.participants.map((p) => p.phone)).toEqual([ME, FRIEND, OTHER]);
    await expect(admin.joinGroup(port, 'bad')).rejects.toBeInstanceOf(NetworkNotFoundError);
    await expect(admin.joinGroup(port, 'gone')).rejects.toBeInstanceOf(NetworkNotFoundError);
  });
});

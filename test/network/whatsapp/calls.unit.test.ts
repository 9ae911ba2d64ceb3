// The WhatsApp side of incoming calls (src/network/whatsapp/calls.ts): which of the library's call updates are
// announced, the caller by number (or by LID form when no number is known), and where a rejection is addressed.
import type { WACallEvent } from 'baileys';
import { describe, expect, it } from 'vitest';
import { incomingCalls, rejectCall } from '../../../src/network/whatsapp/calls.js';
import type { SocketPort } from '../../../src/network/whatsapp/socket-port.js';

const update = (over: Partial<WACallEvent>): WACallEvent => ({
  chatId: '4917600000002@s.whatsapp.net',
  from: '4917600000002@s.whatsapp.net',
  id: 'CALL1',
  date: new Date(),
  status: 'offer',
  offline: false,
  ...over,
});

describe('WhatsApp incoming calls', () => {
  it('announces live offers only, with the caller’s number, video and group', () => {
    expect(
      incomingCalls([
        update({}),
        update({ id: 'CALL2', status: 'ringing' }),
        update({ id: 'CALL3', status: 'terminate' }),
        update({ id: 'CALL4', offline: true }),
        update({ id: 'CALL5', isVideo: true, isGroup: true, groupJid: '120363000000000001@g.us' }),
      ]),
    ).toEqual([
      { id: 'CALL1', from: '4917600000002', video: false },
      { id: 'CALL5', from: '4917600000002', video: true, group: '120363000000000001@g.us' },
    ]);
  });

  it('a caller named by LID: the number behind it when the offer carries one, else the LID form', () => {
    expect(
      incomingCalls([
        update({ from: '55443322@lid', callerPn: '4917600000009@s.whatsapp.net' }),
        update({ id: 'CALL2', from: '66554433@lid' }),
      ]),
    ).toEqual([
      { id: 'CALL1', from: '4917600000009', fromLid: '55443322@lid', video: false },
      { id: 'CALL2', from: '66554433@lid', fromLid: '66554433@lid', video: false },
    ]);
  });

  it('rejects addressed as the offer named the caller', async () => {
    const calls: Array<[string, string]> = [];
    const socket = {
      rejectCall: async (id: string, from: string) => {
        calls.push([id, from]);
      },
    } as unknown as SocketPort;
    await rejectCall(socket, { id: 'CALL1', from: '4917600000002', video: false });
    await rejectCall(socket, { id: 'CALL2', from: '4917600000009', fromLid: '55443322@lid', video: false });
    expect(calls).toEqual([
      ['CALL1', '4917600000002@s.whatsapp.net'],
      ['CALL2', '55443322@lid'],
    ]);
  });
});

// The WhatsApp side of chat settings (src/network/whatsapp/chats.ts): one chatModify per setting, in the seam's
// order, each a modification the library turns into a valid app-state patch (an archive placed at the chat's last
// message, named as the library requires: ours by our encoded id, a received group message with its author).
import { chatModificationToAppPatch, type ChatModification } from 'baileys';
import { describe, expect, it } from 'vitest';
import { toNetworkId } from '../../../src/network/whatsapp/ids.js';
import { modifyChat } from '../../../src/network/whatsapp/chats.js';
import type { SocketPort } from '../../../src/network/whatsapp/socket-port.js';
import { FakeSocket } from './fake-socket.js';

const FRIEND = '4917600000002';
const GROUP = '120363000000000001@g.us';
const OURS = '01JD0000000000000000000000';

function recording(): { socket: Pick<SocketPort, 'chatModify'>; calls: Array<[ChatModification, string]> } {
  const calls: Array<[ChatModification, string]> = [];
  return {
    calls,
    socket: {
      chatModify: async (mod, jid) => {
        // What the library does first with it: a modification it cannot place throws here.
        chatModificationToAppPatch(mod, jid);
        calls.push([mod, jid]);
      },
    },
  };
}

describe('WhatsApp chat settings', () => {
  it('archives at the last message (ours by its network id), then pins, then mutes until the time in ms', async () => {
    const { socket, calls } = recording();
    const at = new Date('2030-01-01T00:00:00Z');
    await modifyChat(
      socket,
      FRIEND,
      { archived: true, pinned: true, mutedUntil: at },
      { id: OURS, fromMe: true, at: new Date(1_700_000_000_500) },
    );
    expect(calls).toEqual([
      [
        {
          archive: true,
          lastMessages: [
            {
              key: { remoteJid: `${FRIEND}@s.whatsapp.net`, fromMe: true, id: toNetworkId(OURS) },
              messageTimestamp: 1_700_000_000,
            },
          ],
        },
        `${FRIEND}@s.whatsapp.net`,
      ],
      [{ pin: true }, `${FRIEND}@s.whatsapp.net`],
      [{ mute: at.getTime() }, `${FRIEND}@s.whatsapp.net`],
    ]);
    const patch = chatModificationToAppPatch(calls[2]![0], calls[2]![1]);
    expect(patch.syncAction.muteAction).toEqual({ muted: true, muteEndTimestamp: at.getTime() });
  });

  it('only what was asked; unmute is mute null; a received group message names its author', async () => {
    const { socket, calls } = recording();
    await modifyChat(socket, GROUP, { mutedUntil: null }, null);
    await modifyChat(
      socket,
      GROUP,
      { archived: false },
      { id: 'ABCDEF0123', fromMe: false, author: FRIEND, at: new Date(1_700_000_000_000) },
    );
    expect(calls).toEqual([
      [{ mute: null }, GROUP],
      [
        {
          archive: false,
          lastMessages: [
            {
              key: { remoteJid: GROUP, fromMe: false, id: 'ABCDEF0123', participant: `${FRIEND}@s.whatsapp.net` },
              messageTimestamp: 1_700_000_000,
            },
          ],
        },
        GROUP,
      ],
    ]);
    expect(chatModificationToAppPatch(calls[0]![0], GROUP).syncAction.muteAction).toEqual({
      muted: false,
      muteEndTimestamp: undefined,
    });
  });

  it('an archive with no known last message names none; a refusal of the library passes on', async () => {
    const { socket, calls } = recording();
    await modifyChat(socket, FRIEND, { archived: true }, null);
    expect(calls).toEqual([[{ archive: true, lastMessages: [] }, `${FRIEND}@s.whatsapp.net`]]);

    // Only the socket's own record and chatModify are used: no connection options are needed.
    const fake = new FakeSocket({} as ConstructorParameters<typeof FakeSocket>[0]);
    fake.chatModifyFails = new Error('app state sync failed');
    await expect(modifyChat(fake, FRIEND, { pinned: false }, null)).rejects.toThrow('app state sync failed');
    expect(fake.calls).toEqual([{ method: 'chatModify', args: [{ pin: false }, `${FRIEND}@s.whatsapp.net`] }]);
  });
});

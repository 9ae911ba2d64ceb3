// Reading the changes WhatsApp phones make (src/network/whatsapp/message-changes.ts): a reaction, an edit and a
// delete for everyone become the seam's `message_changed`, naming their message as the seam does (ours by our id,
// a phone's by WhatsApp's id) and who made the change; what is no change is left to the incoming path.
import { proto, type WAMessage } from 'baileys';
import { describe, expect, it } from 'vitest';
import { toNetworkId } from '../../../src/network/whatsapp/ids.js';
import { translateChange } from '../../../src/network/whatsapp/message-changes.js';
import { upsert } from './harness.js';

const PROTOCOL = proto.Message.ProtocolMessage.Type;
const ME = '4915100000091';
const ME_JIDS = [`${ME}:4@s.whatsapp.net`, '11122233344455:4@lid'];
const FRIEND = '4917600000092';
const FRIEND_JID = `${FRIEND}@s.whatsapp.net`;
const GROUP = '120363000000000091@g.us';
const OURS = '01JB4Z3Q9T8V7W6X5Y4Z3A2B1C';
const THEIRS = 'A1B2C3D4E5F60718';

function from(message: Record<string, unknown>, key: Record<string, unknown> = {}): WAMessage {
  return upsert({ key: { remoteJid: FRIEND_JID, fromMe: false, id: 'CHANGE1', ...key }, message });
}

describe('changes phones make on WhatsApp', () => {
  it('a reaction to one of our messages names it by our id (the library turned its key into our terms)', () => {
    const event = translateChange(
      from({ reactionMessage: { key: { remoteJid: FRIEND_JID, fromMe: true, id: toNetworkId(OURS) }, text: '👍' } }),
      ME_JIDS,
    );
    expect(event).toEqual({
      type: 'message_changed',
      target: { id: OURS, fromMe: true },
      from: FRIEND,
      change: { kind: 'reaction', emoji: '👍' },
      at: new Date(1_760_000_000_000),
    });
  });

  it('a reaction taken away is an empty emoji; one to their own message names it by WhatsApp’s id', () => {
    const event = translateChange(
      from({ reactionMessage: { key: { remoteJid: FRIEND_JID, fromMe: false, id: THEIRS }, text: '' } }),
      ME_JIDS,
    );
    expect(event).toMatchObject({ target: { id: THEIRS, fromMe: false }, change: { kind: 'reaction', emoji: '' } });
  });

  it('a reaction to a message our phone wrote itself (not an id of ours) is left out', () => {
    const event = translateChange(
      from({
        reactionMessage: { key: { remoteJid: FRIEND_JID, fromMe: true, id: '3EB0ABCDEF0123456789AB' }, text: '😂' },
      }),
      ME_JIDS,
    );
    expect(event).toBe('not the gateway’s message');
  });

  it('an edit carries the new text (or caption), wrapped as the library hands it over or not', () => {
    const edit = (editedMessage: Record<string, unknown>) => ({
      protocolMessage: {
        key: { remoteJid: ME_JIDS[0], fromMe: true, id: THEIRS },
        type: PROTOCOL.MESSAGE_EDIT,
        editedMessage,
      },
    });
    expect(translateChange(from(edit({ conversation: 'see you at 6' })), ME_JIDS)).toMatchObject({
      target: { id: THEIRS, fromMe: false },
      from: FRIEND,
      change: { kind: 'edited', text: 'see you at 6' },
    });
    expect(
      translateChange(
        from({ editedMessage: { message: edit({ imageMessage: { caption: 'better caption' } }) } }),
        ME_JIDS,
      ),
    ).toMatchObject({ change: { kind: 'edited', text: 'better caption' } });
    expect(translateChange(from(edit({ imageMessage: {} })), ME_JIDS)).toBe('no text');
  });

  it('a delete for everyone by its author, and by a group admin of one of ours', () => {
    expect(
      translateChange(
        from({ protocolMessage: { key: { remoteJid: ME_JIDS[0], fromMe: true, id: THEIRS }, type: PROTOCOL.REVOKE } }),
        ME_JIDS,
      ),
    ).toMatchObject({ target: { id: THEIRS, fromMe: false }, from: FRIEND, change: { kind: 'deleted' } });
    const byAdmin = translateChange(
      from(
        {
          protocolMessage: {
            key: { remoteJid: GROUP, fromMe: false, participant: `${ME}@s.whatsapp.net`, id: toNetworkId(OURS) },
            type: PROTOCOL.REVOKE,
          },
        },
        { remoteJid: GROUP, participant: FRIEND_JID },
      ),
      ME_JIDS,
    );
    expect(byAdmin).toMatchObject({
      target: { id: OURS, fromMe: true },
      from: FRIEND,
      group: GROUP,
      change: { kind: 'deleted' },
    });
  });

  it('a change made by a sender known by LID alone names the LID, as an incoming message does', () => {
    const event = translateChange(
      from(
        { reactionMessage: { key: { remoteJid: GROUP, fromMe: false, id: THEIRS }, text: '🔥' } },
        { remoteJid: GROUP, participant: '99887766554433@lid' },
      ),
      ME_JIDS,
    );
    expect(event).toMatchObject({ from: '99887766554433@lid', fromLid: '99887766554433@lid', group: GROUP });
  });

  it('messages, bookkeeping, our own phone’s changes and status posts are no changes', () => {
    expect(translateChange(from({ conversation: 'hi' }), ME_JIDS)).toBeNull();
    expect(translateChange(from({ protocolMessage: { type: PROTOCOL.APP_STATE_SYNC_KEY_SHARE } }), ME_JIDS)).toBeNull();
    const react = { reactionMessage: { key: { remoteJid: FRIEND_JID, fromMe: false, id: THEIRS }, text: '👍' } };
    expect(translateChange(from(react, { fromMe: true }), ME_JIDS)).toBeNull();
    expect(
      translateChange(from(react, { remoteJid: 'status@broadcast', participant: FRIEND_JID }), ME_JIDS),
    ).toBeNull();
  });
});

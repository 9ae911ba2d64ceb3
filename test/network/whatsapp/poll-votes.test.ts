// docs/whatsapp.md, Polls: a member's poll in a group arrives with its secret, which the connector keeps, so the
// votes other members cast on it are decrypted too (encrypted here as the stand-in's phones do, standin/votes.ts);
// a vote sealed with another secret is left out. Through the scripted socket, with a real webhook receiver.
import { randomBytes, createHash } from 'node:crypto';
import { proto, type WAMessage } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealVote } from '../../../standin/votes.js';
import { noStoreAvailable, type TestGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait.js';
import { verified, type Receiver } from '../../events/helpers.js';
import { type FakeSocket } from './fake-socket.js';
import { hookedWhatsAppDevice } from './paired-gateway.js';

const KEYS = { current: Buffer.alloc(32, 0x27), previous: [] };
const PHONE = '4915100000095';
const AUTHOR = '4917600000096';
const VOTER = '4917600000097';
const GROUP = '120363000000000097@g.us';
const jid = (phone: string) => `${phone}@s.whatsapp.net`;
const hash = (text: string) => new Uint8Array(createHash('sha256').update(text).digest());

describe.skipIf(noStoreAvailable)('votes on a member’s poll in a group, on WhatsApp (scripted socket)', () => {
  let gw: TestGateway;
  let socket: FakeSocket;
  let hooks: Receiver;
  let device: { id: number; webhook_secret: string };

  beforeAll(async () => {
    ({ gw, hooks, socket, device } = await hookedWhatsAppDevice(KEYS, PHONE, 'group votes'));
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  const events = (type: string) =>
    hooks.received.map((r) => verified(device.webhook_secret, r)).filter((e) => e.type === type);
  const inGroup = (id: string, from: string, message: Record<string, unknown>) =>
    proto.WebMessageInfo.fromObject({
      key: { remoteJid: GROUP, fromMe: false, id, participant: jid(from) },
      message,
      messageTimestamp: 1_760_000_000,
    }) as WAMessage;
  const voteMessage = (id: string, secret: Uint8Array, options: string[]) =>
    inGroup(id, VOTER, {
      pollUpdateMessage: {
        pollCreationMessageKey: { remoteJid: GROUP, fromMe: false, id: 'WAPOLL0001', participant: jid(AUTHOR) },
        vote: sealVote(options.map(hash), secret, { pollId: 'WAPOLL0001', creator: jid(AUTHOR), voter: jid(VOTER) }),
        senderTimestampMs: 1_760_000_000_000,
      },
    });

  it('the poll’s secret is kept on arrival and the vote right behind it is read with it; a forged one is not', async () => {
    const secret = new Uint8Array(randomBytes(32));
    socket.ev.emit('messages.upsert', {
      type: 'notify',
      messages: [
        inGroup('WAPOLL0001', AUTHOR, {
          pollCreationMessageV3: {
            name: 'Venue?',
            options: [{ optionName: 'Cafe' }, { optionName: 'Park' }, { optionName: 'Hall' }],
            selectableOptionsCount: 1,
          },
          messageContextInfo: { messageSecret: secret },
        }),
        voteMessage('WAVOTE0001', new Uint8Array(randomBytes(32)), ['Cafe']),
        voteMessage('WAVOTE0002', secret, ['Park']),
      ],
    });
    // Each event is its own delivery: the vote's may reach the receiver before the poll's.
    await waitFor(
      async () => [events('poll.vote').length, events('message.incoming').length],
      ([votes, incoming]) => votes! >= 1 && incoming! >= 1,
      { what: 'poll.vote and the poll’s message.incoming', timeoutMs: 10_000 },
    );
    const vote = events('poll.vote');
    const poll = events('message.incoming')[0]!.data;
    expect(poll).toMatchObject({ type: 'poll', sender: AUTHOR, params: { group_id: GROUP } });
    expect(vote.map((e) => e.data)).toEqual([{ message_id: poll.id, from: VOTER, selected: ['Park'] }]);
    const shown = (await gw.request('GET', `/messages/${poll.id}`)).body.data;
    expect(shown.poll.tally).toEqual([
      { option: 'Cafe', count: 0, voters: [] },
      { option: 'Park', count: 1, voters: [VOTER] },
      { option: 'Hall', count: 0, voters: [] },
    ]);
    // Neither vote became a message.
    expect(events('message.incoming')).toHaveLength(1);
  });
});

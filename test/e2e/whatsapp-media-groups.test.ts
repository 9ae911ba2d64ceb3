// The built gateway against the WhatsApp stand-in (docs/standin.md): a media upload that stalls fails the send as a
// transient failure after GATEWAY_WHATSAPP_UPLOAD_TIMEOUT_MS and is retried, and the device's next message follows;
// group sends use the group metadata the connector keeps (one query for two sends) and fetch it again after a
// participant change; view-once media keeps its mentions; a mention in a LID-addressed group names the member by
// LID. SQLite only (vitest.config.ts).
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15554560001';
const FRIEND = '15554560002';
const MEMBER = '15554560003';
const NEWCOMER = '15554560004';
/** How long an upload may stall here; the stand-in's stall is longer. */
const UPLOAD_TIMEOUT_MS = 1500;
const MP4 = readFileSync(new URL('../fixtures/media/tiny.mp4', import.meta.url));

let world: StandinWorld;
let videos: Server;
let videoUrl: string;
const faults = (body: Record<string, unknown>) => world.standin.call('POST', '/control/faults', body);
const stats = async () => (await world.standin.call('GET', '/control/stats')).body;

beforeAll(async () => {
  world = await startStandinWorld(9);
  videos = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(MP4));
  await new Promise<void>((resolve) => videos.listen(0, '127.0.0.1', resolve));
  videoUrl = `http://127.0.0.1:${(videos.address() as { port: number }).port}/tiny.mp4`;
  await world.startGateway({ GATEWAY_WHATSAPP_UPLOAD_TIMEOUT_MS: String(UPLOAD_TIMEOUT_MS) });
  await world.pairedDevice('media and groups', ME, { webhook: false });
});

afterEach(async () => {
  await faults({});
});

afterAll(async () => {
  await world?.stop();
  await new Promise((resolve) => videos?.close(resolve));
});

async function send(body: Record<string, unknown>, path = '/messages'): Promise<string> {
  const answer = await world.api('POST', path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.data.id as string;
}

const sent = (id: string, what: string) =>
  waitFor(
    () => world.message(id),
    (m) => m.status === 'sent' || m.status === 'delivered',
    { ...WAIT, what },
  );

describe('media and groups on the WhatsApp connector', () => {
  /** The gateway's group for a group the stand-in made, once the device has synced it. */
  const synced = (networkId: string) =>
    waitFor(
      async () =>
        ((await world.api('GET', `/groups?device=${ME}&per_page=100`)).body.data as any[]).find(
          (g) => g.network_id === networkId,
        ),
      (g) => g !== undefined,
      { ...WAIT, what: 'the group synced' },
    );
  it('a stalled upload fails the send as transient after the upload timeout; it is retried and the next message follows', async () => {
    const before = (await stats()).uploads as number;
    // The upload's answer held back past the upload timeout: a stall. Shorter than the 5 s idle timeout of Node's
    // own HTTPS agent, which the library's upload would otherwise inherit: only the setting can cut this one.
    await faults({ slow_upload_ms: UPLOAD_TIMEOUT_MS + 2000 });
    const stalled = await send({
      device: ME,
      receiver: FRIEND,
      type: 'image',
      params: { image: { url: world.filesUrl }, caption: 'stalled upload' },
    });
    const next = await send({ device: ME, receiver: FRIEND, type: 'chat', params: { text: 'after the stall' } });
    // A second upload of the same message: the first gave up after the timeout, and the send was retried.
    await waitFor(stats, (s) => s.uploads >= before + 2, { ...WAIT, what: 'the upload tried again' });
    expect((await world.message(stalled)).status).toBe('pending');
    // Uploads work again: the retry goes through, and the message queued behind it follows.
    await faults({});
    await sent(stalled, 'the stalled image sent on a retry');
    await sent(next, 'the next message sent');
    const inbox = (await world.phone(FRIEND)).inbox as { text?: string }[];
    expect(inbox.filter((m) => m.text === 'stalled upload')).toHaveLength(1);
    expect(inbox.filter((m) => m.text === 'after the stall')).toHaveLength(1);
    expect(inbox.findIndex((m) => m.text === 'stalled upload')).toBeLessThan(
      inbox.findIndex((m) => m.text === 'after the stall'),
    );
  });

  it('a view-once video keeps its mentions', async () => {
    const id = await send({
      device: ME,
      receiver: FRIEND,
      type: 'video',
      params: {
        video: { url: videoUrl },
        mimetype: 'video/mp4',
        caption: `look @${MEMBER}`,
        viewOnce: true,
        mentions: [MEMBER],
      },
    });
    await sent(id, 'the view-once video sent');
    const entry = await waitFor(
      async () => ((await world.phone(FRIEND)).inbox as any[]).find((m) => m.text === `look @${MEMBER}`),
      (m) => m !== undefined,
      { ...WAIT, what: 'the video on the phone' },
    );
    expect(entry).toMatchObject({ type: 'video', view_once: true, mentions: [`${MEMBER}@s.whatsapp.net`] });
  });

  it('a mention in a LID-addressed group names the member by LID, in the mention and in the text', async () => {
    // The stand-in's groups are LID-addressed, as WhatsApp's groups now are: a phone there mentions a member by LID.
    const made = await world.standin.call('POST', '/control/groups', { subject: 'mentions', members: [ME, MEMBER] });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const group = await synced(made.body.id);
    const lid = (await world.phone(MEMBER)).lid as string;
    const id = await send(
      { type: 'chat', params: { text: `hello @${MEMBER}, see this`, mentions: [MEMBER] } },
      `/groups/${group.id}/send`,
    );
    await sent(id, 'the group mention sent');
    const entry = await waitFor(
      async () =>
        ((await world.phone(MEMBER)).inbox as any[]).find(
          (m) => typeof m.text === 'string' && m.text.includes('see this'),
        ),
      (m) => m !== undefined,
      { ...WAIT, what: "the member's copy" },
    );
    expect(entry).toMatchObject({ text: `hello @${lid.split('@')[0]}, see this`, mentions: [lid] });
  });

  it('two group sends make one group metadata query; a participant change makes the next send fetch it again', async () => {
    const made = await world.standin.call('POST', '/control/groups', { subject: 'cached', members: [ME, MEMBER] });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const group = await synced(made.body.id);
    const before = (await stats()).group_queries as number;
    const first = await send({ type: 'chat', params: { text: 'group one' } }, `/groups/${group.id}/send`);
    await sent(first, 'the first group message sent');
    const second = await send({ type: 'chat', params: { text: 'group two' } }, `/groups/${group.id}/send`);
    await sent(second, 'the second group message sent');
    expect((await stats()).group_queries - before).toBeLessThanOrEqual(1);

    // The device adds a participant: the network's notice makes the connector forget what it kept.
    const added = await world.api('POST', `/groups/${group.id}/members/add`, { participants: [NEWCOMER] });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const third = await send({ type: 'chat', params: { text: 'group three' } }, `/groups/${group.id}/send`);
    await sent(third, 'the third group message sent');
    // The newcomer's phone has it: the send went to the group as it is now, not as it was kept.
    await waitFor(
      async () => ((await world.phone(NEWCOMER)).inbox as { text?: string }[]).some((m) => m.text === 'group three'),
      (has) => has,
      { ...WAIT, what: "the newcomer's copy" },
    );
    const member = (await world.phone(MEMBER)).inbox as { text?: string }[];
    expect(member.filter((m) => m.text?.startsWith('group ')).map((m) => m.text)).toEqual([
      'group one',
      'group two',
      'group three',
    ]);
  });
});

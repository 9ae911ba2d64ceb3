// The built gateway against the WhatsApp stand-in (docs/standin.md): the send types of DECISIONS 15 reach the
// stand-in's phone as WhatsApp carries them: a sticker (its WebP bytes), a contact card as a vCard, a poll with its
// options and the message secret its votes need (kept in the session's key store before it left), a voice note,
// and a chat's link preview with its thumbnail. SQLite only (vitest.config.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15554570001';
const FRIEND = '15554570002';
const fixture = (name: string) => readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url));
const WEBP = fixture('tiny.webp');
const OGG = fixture('tiny.ogg');
const JPEG = fixture('tiny.jpg');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const PAGE = `<html><head><meta property="og:title" content="Spring sale">
<meta property="og:description" content="Half price until Sunday"><meta property="og:image" content="/cover.jpg">
</head><body></body></html>`;

let world: StandinWorld;
let files: Server;
let origin: string;

beforeAll(async () => {
  world = await startStandinWorld(11);
  files = createServer((req, res) => {
    const body: Record<string, [string, Buffer | string]> = {
      '/sticker.webp': ['image/webp', WEBP],
      '/note.ogg': ['audio/ogg', OGG],
      '/cover.jpg': ['image/jpeg', JPEG],
      '/sale': ['text/html', PAGE],
    };
    const found = body[req.url ?? ''];
    if (found === undefined) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': found[0] }).end(found[1]);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(files.address() as { port: number }).port}`;
  await world.startGateway();
  await world.pairedDevice('send types', ME, { webhook: false });
});

afterAll(async () => {
  await world?.stop();
  await new Promise((resolve) => files?.close(resolve));
});

/** Sends to FRIEND, waits until it is sent, and answers the gateway's message and the phone's inbox entry. */
async function delivered(type: string, params: Record<string, unknown>, match: (entry: any) => boolean) {
  const answer = await world.api('POST', '/messages', { device: ME, receiver: FRIEND, type, params });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const id = answer.body.data.id as string;
  const message = await waitFor(
    () => world.message(id),
    (m) => ['sent', 'delivered', 'read'].includes(m.status),
    { ...WAIT, what: `the ${type} sent` },
  );
  const entry = await waitFor(
    async () => ((await world.phone(FRIEND)).inbox as any[]).find(match),
    (found) => found !== undefined,
    { ...WAIT, what: `the ${type} on the phone` },
  );
  return { message, entry };
}

describe('the send types on the WhatsApp connector', () => {
  it('a sticker arrives with its WebP bytes', async () => {
    const { entry } = await delivered(
      'sticker',
      { sticker: { url: `${origin}/sticker.webp` } },
      (e) => e.type === 'sticker',
    );
    expect(entry.media_sha256).toBe(sha256(WEBP));
  });

  it('a contact arrives as a vCard with its number as WhatsApp reads it', async () => {
    const { entry } = await delivered(
      'contact',
      { contacts: [{ name: 'Siti; Rahma', phone: '+6281298765432', organization: 'Toko Maju' }] },
      (e) => e.type === 'contact',
    );
    expect(entry.contacts).toHaveLength(1);
    expect(entry.contacts[0].display_name).toBe('Siti; Rahma');
    expect(entry.contacts[0].vcard.split('\n')).toEqual([
      'BEGIN:VCARD',
      'VERSION:3.0',
      'FN:Siti\\; Rahma',
      'ORG:Toko Maju',
      'TEL;type=CELL;type=VOICE;waid=6281298765432:+6281298765432',
      'END:VCARD',
    ]);
  });

  it('two contacts arrive as one message of two cards', async () => {
    const { entry } = await delivered(
      'contact',
      {
        contacts: [
          { name: 'Ani', phone: '6281200000001' },
          { name: 'Budi', phone: '6281200000002' },
        ],
      },
      (e) => e.type === 'contact' && e.contacts.length === 2,
    );
    expect(entry.contacts.map((c: any) => c.display_name)).toEqual(['Ani', 'Budi']);
  });

  it('a poll arrives with its options and secret; the secret is kept in the session key store', async () => {
    const { message, entry } = await delivered(
      'poll',
      { name: 'Meeting day?', options: ['Mon', 'Wed', 'Fri'], selectable_count: 2 },
      (e) => e.type === 'poll',
    );
    expect(entry.poll).toEqual({
      name: 'Meeting day?',
      options: ['Mon', 'Wed', 'Fri'],
      selectable_count: 2,
      has_secret: true,
    });
    const store = openStore({ databaseUrl: world.location.databaseUrl, dataDir: world.location.dataDir });
    try {
      const kept = await store.db
        .selectFrom('network_auth_keys')
        .select(['key_id', 'value'])
        .where('kind', '=', 'poll-secret')
        .execute();
      expect(kept.map((row) => row.key_id)).toEqual([entry.id]);
      // Sealed: the stored value is not the 32 bytes themselves.
      expect(kept[0]!.value.length).toBeGreaterThan(32);
    } finally {
      await store.close();
    }
    expect(message.params).toEqual({ name: 'Meeting day?', options: ['Mon', 'Wed', 'Fri'], selectable_count: 2 });
  });

  it('audio with ptt: true arrives as a voice note', async () => {
    const { entry } = await delivered(
      'audio',
      { audio: { url: `${origin}/note.ogg` }, mimetype: 'audio/ogg; codecs=opus', ptt: true },
      (e) => e.type === 'audio',
    );
    expect(entry).toMatchObject({ ptt: true, media_sha256: sha256(OGG) });
  });

  it('a chat with a link arrives with its preview and thumbnail; link_preview: false sends none', async () => {
    const text = `Don't miss it: ${origin}/sale`;
    const { entry } = await delivered('chat', { text }, (e) => e.text === text);
    expect(entry.link_preview).toEqual({
      url: `${origin}/sale`,
      title: 'Spring sale',
      description: 'Half price until Sunday',
      thumbnail_sha256: sha256(JPEG),
    });
    const plain = `No preview: ${origin}/sale`;
    const { entry: without } = await delivered('chat', { text: plain, link_preview: false }, (e) => e.text === plain);
    expect(without).not.toHaveProperty('link_preview');
  });
});

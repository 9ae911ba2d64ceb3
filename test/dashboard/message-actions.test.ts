// The messages page and issue 26 (DECISIONS 15) in a real browser: incoming media (an image whose preview really
// loads from its signed URL, a file's download link that works without the token, a file over the limit said
// plainly), a phone's reaction, edit, delete and poll vote shown as they come (the page refreshes itself), and the
// user reacting, taking the reaction away, editing (and refused in the API's words), deleting and marking read from
// the page, each checked through the API. One gateway, one browser, one paired sandbox device for the file; the
// media comes from a real local HTTP server.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { startMediaServer, type MediaServer } from '../media/media-server.js';
import { connectBrowser, PageSlot, seriousViolations, startDashboardGateway } from './harness.js';
import { ShiftedClock } from '../helpers/shifted-clock.js';

const DEVICE_PHONE = '6281377000301';
const CUSTOMER = '6281377000402';
const WAIT = { timeout: 15_000 };
const PUBLIC_URL = 'https://gateway.example.test';
const MINUTE = 60_000;

const PNG = readFileSync(new URL('../fixtures/media/tiny.png', import.meta.url));

describe('the messages page: incoming media, reactions, edits, deletes, polls and actions', () => {
  const clock = new ShiftedClock();
  let gw: TestGateway;
  let base: string;
  let browser: Browser;
  let media: MediaServer;
  let deviceId: number;
  /** The customer's message the phone edits (second test); still unread when the third marks a later one read. */
  let typoId = '';
  const pages = new PageSlot(
    () => browser,
    () => base,
  );

  beforeAll(async () => {
    // 1 MB per incoming file, so a file over it is quick to make. The public address is another origin (a gateway
    // behind a proxy): the page must load the signed media URLs from its own origin, the only one its CSP allows.
    ({ gw, base } = await startDashboardGateway({ incomingMediaMaxMb: 1, publicUrl: PUBLIC_URL }, clock));
    media = await startMediaServer();
    browser = await connectBrowser();
    deviceId = (await createPairedDevice(gw, DEVICE_PHONE)).id as number;
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await media?.close();
  });

  async function messagesPage(name: string): Promise<Page> {
    const p = await pages.openSignedIn(name, `#/devices/${deviceId}/messages`);
    await p.getByRole('heading', { name: 'Messages', exact: true }).waitFor(WAIT);
    return p;
  }
  afterEach((test) => pages.close(test));

  const messageOf = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;

  /** The customer's phone sends the device a message; answers its incoming message object once listed. */
  async function fromCustomer(body: Record<string, unknown>, find: (m: any) => boolean): Promise<any> {
    const sent = await gw.request('POST', `/sandbox/phones/${CUSTOMER}/messages`, { to: DEVICE_PHONE, ...body });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    return waitFor(
      async () =>
        (
          (await gw.request('GET', `/messages?device=${DEVICE_PHONE}&direction=incoming&limit=100`)).body.data as any[]
        ).find(find),
      (m) => m !== undefined,
      { what: 'the incoming message', timeoutMs: 10_000 },
    );
  }

  /** The device sends the customer a message through the API; answers it once the phone has it. */
  async function toCustomer(type: string, params: Record<string, unknown>): Promise<any> {
    const sent = await gw.request('POST', '/messages', { device: DEVICE_PHONE, receiver: CUSTOMER, type, params });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    return waitFor(
      () => messageOf(sent.body.data.id),
      (m) => m.status === 'delivered',
      { what: 'delivered', timeoutMs: 10_000 },
    );
  }

  async function phone(action: 'reactions' | 'edits' | 'deletes' | 'votes', body: Record<string, unknown>) {
    const answer = await gw.request('POST', `/sandbox/phones/${CUSTOMER}/${action}`, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  }

  const rowWith = (p: Page, text: string) => p.getByRole('row').filter({ hasText: text });

  it('shows an incoming image whose preview loads, one still downloading, a file to download, and one too large', async () => {
    const photo = media.answer('/photo.png', { bytes: PNG });
    const image = await fromCustomer(
      { type: 'image', text: 'a photo of the order', media: { url: photo, mimetype: 'image/png' } },
      (m) => m.message === 'a photo of the order',
    );
    const pdf = Buffer.from('%PDF-1.4\n% a small document\n');
    const report = media.answer('/report.pdf', { bytes: pdf });
    await fromCustomer(
      { type: 'file', media: { url: report, mimetype: 'application/pdf', file_name: 'report.pdf' } },
      (m) => m.type === 'file',
    );
    const big = media.answer('/big.mp4', { bytes: Buffer.alloc(1_500_000, 7) });
    await fromCustomer(
      { type: 'video', text: 'a long video', media: { url: big, mimetype: 'video/mp4' } },
      (m) => m.message === 'a long video',
    );
    // Its server holds the answer back: the message is there at once, its media still downloading.
    const slow = media.answer('/slow.png', { held: true, bytes: PNG });
    await fromCustomer(
      { type: 'image', text: 'a photo still coming', media: { url: slow, mimetype: 'image/png' } },
      (m) => m.message === 'a photo still coming',
    );
    const stored = await waitFor(
      () => messageOf(image.id),
      (m) => m.media?.status === 'stored',
      { what: 'image stored', timeoutMs: 10_000 },
    );
    expect(stored.file_url.startsWith(`${PUBLIC_URL}/media/`)).toBe(true);

    const p = await messagesPage('incoming media');
    const preview = rowWith(p, 'a photo of the order').getByRole('img', { name: `Image from ${CUSTOMER}` });
    await preview.waitFor(WAIT);
    // The image really loaded from the gateway (its signed URL, no token): the browser decoded its 8×8 pixels.
    // (Its DOM type is named here: this file is type-checked without the DOM's types.)
    const naturalWidth = () =>
      preview.evaluate((img) => {
        const loaded = img as unknown as { complete: boolean; naturalWidth: number };
        return loaded.complete ? loaded.naturalWidth : 0;
      });
    await expect.poll(naturalWidth).toBe(8);
    // Signed afresh on each read of the message: the same media, from this origin.
    expect(await preview.getAttribute('src')).toMatch(
      new RegExp(`^${new URL(stored.file_url).pathname}\\?expires=\\d+&signature=[\\w-]{43}$`),
    );

    const link = p.getByRole('link', { name: 'Download report.pdf', exact: true });
    await link.waitFor(WAIT);
    const href = await link.getAttribute('href');
    const fetched = await fetch(new URL(href ?? '', base), { headers: { connection: 'close' } });
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(pdf)).toBe(true);

    await rowWith(p, 'a long video').getByText('Media too large: not downloaded').waitFor(WAIT);
    const coming = rowWith(p, 'a photo still coming');
    await coming.getByText('Media downloading…').waitFor(WAIT);
    expect(await coming.getByRole('img').count()).toBe(0);
    // Once the file is stored the page shows it by itself.
    media.release('/slow.png');
    await coming.getByRole('img', { name: `Image from ${CUSTOMER}` }).waitFor(WAIT);
    expect(await coming.getByText('Media downloading…').count()).toBe(0);
    expect(await seriousViolations(p)).toEqual([]);
  });

  it('shows a phone’s reaction, edit, delete and poll votes as they happen, without a reload', async () => {
    const ours = await toCustomer('chat', { text: 'Your order is ready' });
    const poll = await toCustomer('poll', { name: 'Pick up when?', options: ['Today', 'Tomorrow'] });
    const typo = await fromCustomer({ text: 'I will com at 5' }, (m) => m.message === 'I will com at 5');
    typoId = typo.id as string;
    const regret = await fromCustomer({ text: 'never mind this' }, (m) => m.message === 'never mind this');

    const p = await messagesPage('phone changes');
    await rowWith(p, 'Your order is ready').waitFor(WAIT);
    await phone('reactions', { message_id: ours.id, emoji: '❤️' });
    await phone('edits', { message_id: typo.id, text: 'I will come at 5' });
    await phone('deletes', { message_id: regret.id });
    await phone('votes', { message_id: poll.id, options: ['Tomorrow'] });

    const reactions = rowWith(p, 'Your order is ready').getByRole('list', { name: 'Reactions' });
    await expect.poll(() => reactions.textContent().catch(() => '')).toContain(`❤️ from ${CUSTOMER}`);
    const edited = rowWith(p, 'I will come at 5');
    await expect.poll(() => edited.textContent().catch(() => '')).toContain('Edited');
    expect(await p.getByText('I will com at 5', { exact: true }).count()).toBe(0);
    // Deleted for everyone: marked, the content kept.
    await expect.poll(() => rowWith(p, 'never mind this').textContent()).toContain('Deleted for everyone');
    const tally = p.getByRole('list', { name: 'Votes on Pick up when?' });
    await expect.poll(() => tally.textContent().catch(() => '')).toContain(`Tomorrow: 1 vote (${CUSTOMER})`);
    expect(await tally.textContent()).toContain('Today: 0 votes');
    expect(await rowWith(p, 'Poll: Pick up when?').textContent()).toContain('one choice, 1 vote');
    expect(await seriousViolations(p)).toEqual([]);
    // On a phone-sized screen too: each message a block of labelled lines.
    await p.setViewportSize({ width: 375, height: 800 });
    expect(await seriousViolations(p)).toEqual([]);
  });

  it('reacts, takes the reaction away, edits, deletes and marks read from the page; the API shows each', async () => {
    const ours = await toCustomer('chat', { text: 'See you at 4' });
    const asked = await fromCustomer(
      { text: 'Are you open on Sunday?' },
      (m) => m.message === 'Are you open on Sunday?',
    );
    const p = await messagesPage('user actions');
    const row = rowWith(p, 'See you at 4');

    // By keyboard: React opens the choice right after it, Enter on 👍 sends it, and focus is back on React.
    const focused = () => p.evaluate<string>("document.activeElement?.textContent ?? ''");
    await row.getByRole('button', { name: 'React', exact: true }).focus();
    await p.keyboard.press('Enter');
    await row.getByRole('group', { name: 'Pick a reaction' }).waitFor(WAIT);
    await p.keyboard.press('Tab');
    expect(await p.evaluate<string>("document.activeElement?.getAttribute('aria-label') ?? ''")).toBe('React with 👍');
    await p.keyboard.press('Enter');
    await row.getByRole('status').filter({ hasText: 'Reaction sent' }).waitFor(WAIT);
    expect(await row.getByRole('group', { name: 'Pick a reaction' }).count()).toBe(0);
    expect(await focused()).toBe('React');
    expect(await row.getByRole('list', { name: 'Reactions' }).textContent()).toContain(`👍 from ${DEVICE_PHONE}`);
    expect((await messageOf(ours.id)).reactions).toEqual([{ from: DEVICE_PHONE, emoji: '👍' }]);

    await row.getByRole('button', { name: 'Take reaction away', exact: true }).click();
    await row.getByRole('status').filter({ hasText: 'Reaction removed' }).waitFor(WAIT);
    expect(await row.getByRole('list', { name: 'Reactions' }).count()).toBe(0);
    expect(await focused()).toBe('React');
    expect((await messageOf(ours.id)).reactions).toBeUndefined();

    // A blank edit is refused: the API's message shows, and the form stays open with the text.
    await row.getByRole('button', { name: 'Edit', exact: true }).click();
    const text = row.getByLabel('New text');
    expect(await text.inputValue()).toBe('See you at 4');
    await text.fill('   ');
    await row.getByRole('button', { name: 'Save edit', exact: true }).click();
    await expect.poll(() => row.getByRole('alert').textContent()).toContain('Validation failed');
    expect((await messageOf(ours.id)).message).toBe('See you at 4');
    await text.fill('See you at 5');
    await row.getByRole('button', { name: 'Save edit', exact: true }).click();
    const moved = rowWith(p, 'See you at 5');
    await moved.getByRole('status').filter({ hasText: 'Message edited' }).waitFor(WAIT);
    expect(await moved.textContent()).toContain('Edited');
    expect(await moved.getByLabel('New text').count()).toBe(0);
    const edited = await messageOf(ours.id);
    expect(edited.message).toBe('See you at 5');
    expect(edited.edited_at).toEqual(expect.any(String));

    await moved.getByRole('button', { name: 'Delete for everyone', exact: true }).click();
    await moved.getByRole('button', { name: 'Yes, delete it', exact: true }).click();
    await moved.getByRole('status').filter({ hasText: 'Message deleted' }).waitFor(WAIT);
    expect(await moved.textContent()).toContain('Deleted for everyone');
    expect(await moved.getByRole('button', { name: 'Delete for everyone' }).count()).toBe(0);
    expect((await messageOf(ours.id)).deleted_at).toEqual(expect.any(String));

    const incoming = rowWith(p, 'Are you open on Sunday?');
    expect(await incoming.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    await incoming.getByRole('button', { name: 'Mark read', exact: true }).click();
    await incoming.getByRole('status').filter({ hasText: 'Message read' }).waitFor(WAIT);
    expect(await incoming.getByRole('button', { name: 'Mark read' }).count()).toBe(0);
    expect((await messageOf(asked.id)).read_at).toEqual(expect.any(String));
    // Every earlier unread message of the chat is read with it, and the page shows it.
    await expect.poll(() => rowWith(p, 'I will come at 5').getByRole('button', { name: 'Mark read' }).count()).toBe(0);
    expect((await messageOf(typoId)).read_at).toEqual(expect.any(String));
    expect(await seriousViolations(p)).toEqual([]);
  });

  it('cancels a message still queued from the page: failed, “cancelled”, its quota unit back', async () => {
    // Ten minutes between this device's sends: the earlier tests' sends were moments ago, so the next one waits.
    const slow = await gw.request('PATCH', `/devices/${deviceId}`, { send_interval_ms: 600_000 });
    expect(slow.status, JSON.stringify(slow.body)).toBe(200);
    try {
      const queued = await gw.request('POST', '/messages', {
        device: DEVICE_PHONE,
        receiver: CUSTOMER,
        type: 'chat',
        params: { text: 'waits in the queue' },
      });
      expect(queued.body.data.status).toBe('pending');
      const quota = async () =>
        Number((await gw.request('GET', `/devices/${deviceId}`)).body.data.subscription.quote_used);
      const used = await quota();
      const p = await messagesPage('cancel queued');
      const row = rowWith(p, 'waits in the queue');
      await row.getByRole('button', { name: 'Cancel message', exact: true }).click();
      await row.getByRole('button', { name: 'Yes, cancel it', exact: true }).click();
      await row.getByRole('status').filter({ hasText: 'Message cancelled' }).waitFor(WAIT);
      expect(await row.textContent()).toContain('cancelled');
      expect(await row.getByRole('button', { name: 'Cancel message' }).count()).toBe(0);
      expect(await messageOf(queued.body.data.id)).toMatchObject({ status: 'failed', failed_reason: 'cancelled' });
      expect(await quota()).toBe(used - 1);
    } finally {
      await gw.request('PATCH', `/devices/${deviceId}`, { send_interval_ms: 0 });
    }
  });
  it('an edit after 15 minutes is refused in the API’s words, and the text stays as it was', async () => {
    const ours = await toCustomer('chat', { text: 'Closing at 9' });
    // Moved on last: every later send of the file would be 16 minutes on too.
    clock.advance(16 * MINUTE);
    const p = await messagesPage('edit too late');
    const row = rowWith(p, 'Closing at 9');
    await row.getByRole('button', { name: 'Edit', exact: true }).click();
    await row.getByLabel('New text').fill('Closing at 10');
    await row.getByRole('button', { name: 'Save edit', exact: true }).click();
    await expect.poll(() => row.getByRole('alert').textContent()).toContain('Message cannot be edited');
    expect(await row.getByLabel('New text').inputValue()).toBe('Closing at 10');
    const kept = await messageOf(ours.id);
    expect(kept.message).toBe('Closing at 9');
    expect(kept.edited_at).toBeUndefined();
  });
});

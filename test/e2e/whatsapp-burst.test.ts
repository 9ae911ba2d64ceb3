// A burst through the WhatsApp stand-in (docs/standin.md): 500 messages from five phones to one device while the
// gateway's SQLite store is slow (another process holds its write lock most of the time, as a CLI writing beside
// the gateway would) and the stand-in drops every connection three times. Every message the device receipted to
// the network is stored exactly once; the stand-in offers again what was not receipted before a drop (as WhatsApp
// does), so the messages keep arriving after each reconnect. SQLite only (vitest.config.ts).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLockHolder } from '../helpers/sqlite-lock-holder.js';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, type StandinWorld } from './standin-harness.js';

const ME = '15553450001';
const PHONES = ['15553450011', '15553450012', '15553450013', '15553450014', '15553450015'];
const TOTAL = 500;
/** After how many messages sent the stand-in drops every connection. */
const DROPS_AFTER = [125, 250, 375];
const LONG = { timeoutMs: 45_000, intervalMs: 200 };

let world: StandinWorld;

beforeAll(async () => {
  world = await startStandinWorld(7);
  await world.startGateway();
  await world.pairedDevice('burst', ME, { webhook: false });
});

afterAll(async () => {
  await world?.stop();
});

/** Every incoming message the gateway stored for the device, through the API, page by page. */
async function storedTexts(): Promise<string[]> {
  const texts: string[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await world.api(
      'GET',
      `/messages?direction=incoming&device=${ME}&limit=100${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    for (const m of page.body.data) texts.push(m.message as string);
    cursor = page.body.next_cursor ?? null;
  } while (cursor !== null);
  return texts;
}

describe('a burst of incoming messages on a slow store and a dropping connection', () => {
  it('stores every one of the messages exactly once', async () => {
    const holder = await startLockHolder(join(world.location.dataDir, 'gateway.sqlite'), { holdMs: 20, gapMs: 20 });
    let rounds = 0;
    let sentIn = 0;
    const started = Date.now();
    const stats = () => world.standin.call('GET', '/control/stats').then((r) => r.body);
    let sent = 0;
    let final: any;
    try {
      // The drops: each once the count passed its mark and the device is back from the drop before.
      const dropper = (async () => {
        let logins = (await stats()).logins as number;
        for (const mark of DROPS_AFTER) {
          await waitFor(
            () => sent,
            (n) => n >= mark,
            { ...LONG, what: `${mark} messages sent` },
          );
          await waitFor(stats, (s) => s.logins >= logins && s.streams_open === 1, { ...LONG, what: 'logged in again' });
          const dropped = await world.standin.call('POST', '/control/drop', {});
          expect(dropped.body.dropped).toBe(1);
          logins += 1;
        }
      })();
      // One sender per phone, each in order.
      await Promise.all(
        PHONES.map(async (phone, p) => {
          for (let i = p; i < TOTAL; i += PHONES.length) {
            const answer = await world.standin.call('POST', `/control/phones/${phone}/messages`, {
              to: ME,
              text: `burst ${i}`,
            });
            expect(answer.status, JSON.stringify(answer.body)).toBe(200);
            sent += 1;
          }
        }),
      );
      sentIn = Date.now() - started;
      await dropper;
      // Everything offered has been receipted by the device (re-offered after each drop where it had not been).
      final = await waitFor(stats, (s) => s.waiting === 0 && s.streams_open === 1, {
        ...LONG,
        what: 'every message receipted by the device',
      });
    } finally {
      rounds = (await holder.stop()).rounds;
    }
    const receiptedIn = Date.now() - started;

    const receipted = new Set<string>();
    for (const phone of PHONES)
      for (const entry of (await world.phone(phone)).sent) if (entry.delivered_at) receipted.add(entry.text);
    const all = Array.from({ length: TOTAL }, (_, i) => `burst ${i}`);
    // A message whose receipt went out on a stream the stand-in was already dropping is stored and, offered again,
    // refused as decrypted before: stored once all the same. Counted from the store, never from the receipts.
    const texts = await waitFor(storedTexts, (stored) => all.every((text) => stored.includes(text)), {
      ...LONG,
      what: 'all messages stored',
    }).catch(() => storedTexts());
    const duplicates = texts.filter((text, i) => texts.indexOf(text) !== i);
    const missing = all.filter((text) => !texts.includes(text));
    console.info(
      `burst: ${TOTAL} sent in ${sentIn} ms, all receipted after ${receiptedIn} ms; ${receipted.size} receipted, ` +
        `${texts.length} stored, ${missing.length} missing, ${final.reoffered} re-offered, ${final.refused} refused, ${final.logins} logins, ` +
        `lock held ${rounds} times`,
    );
    expect(missing).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(final.reoffered).toBeGreaterThan(0);
    expect(final.logins).toBeGreaterThanOrEqual(4);
  }, 120_000);
});

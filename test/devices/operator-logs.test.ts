// Operators see the device lifecycle in the logs (issue 10 item 15): at
// `info` pairing, QR expiry, connection drops and reconnects with the backoff,
// logouts, and message failures with their reason; at `warn` a device
// reconnecting in a loop. Never a secret or a message's content.
import { afterEach, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const INFO = 30;
const WARN = 40;

describe.skipIf(noStoreAvailable)('operator logs of the device lifecycle', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  /** A 1 s pairing window only where its expiry is the point: under load a QR fetched, decoded and scanned can take longer. */
  async function start(pairingWindowS = 60): Promise<{ g: TestGateway; lines: LogLine[]; raw: string[] }> {
    const raw: string[] = [];
    const lines: LogLine[] = [];
    gw = await startGateway({
      config: { pairingWindowS, allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        logger: {
          level: 'info',
          stream: {
            write(line: string) {
              raw.push(line);
              lines.push(JSON.parse(line) as LogLine);
            },
          },
        },
        connections: { reconnectBaseMs: 20, reconnectMaxMs: 100 },
      },
    });
    return { g: gw, lines, raw };
  }

  const find = (lines: LogLine[], msg: string, deviceId: number) =>
    lines.filter((l) => l.msg === msg && l.deviceId === deviceId);

  it('logs pairing, drops with the backoff, reconnects, a reconnect loop, failures and a logout; no secrets or content', async () => {
    const { g, lines, raw } = await start();
    const phone = '6281700005101';
    const device = await createPairedDevice(g, phone);
    const secret = device.webhook_secret as string;
    const { network_session: session } = await g.app.store.db
      .selectFrom('devices')
      .select('network_session')
      .where('id', '=', device.id)
      .executeTakeFirstOrThrow();
    expect(typeof session).toBe('string');
    expect(find(lines, 'device paired', device.id)).toEqual([expect.objectContaining({ level: INFO, phone })]);
    expect(find(lines, 'device connected', device.id)).toHaveLength(1);

    // A message the network refuses (a number that is not registered) fails with its reason.
    const text = 'a private sentence that must never reach a log';
    const sent = await g.request('POST', '/messages', {
      device: phone,
      receiver: '6281799990000',
      type: 'chat',
      params: { text },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const failure = await waitFor(
      () => find(lines, 'message failed', device.id),
      (found) => found.length === 1,
      { what: 'the failure logged' },
    );
    expect(failure[0]).toMatchObject({ level: INFO, messageId: sent.body.data.id, reason: expect.any(String) });
    expect((failure[0]!.reason as string).length).toBeGreaterThan(0);

    // Five drops in a row: each logged with its backoff, then one warning that it loops.
    for (let i = 1; i <= 5; i++) {
      const dropped = await g.request('POST', `/sandbox/devices/${device.id}/disconnect`, { logout: false });
      expect(dropped.status, JSON.stringify(dropped.body)).toBe(200);
      await waitFor(
        () => find(lines, 'device reconnected', device.id),
        (found) => found.length === i,
        { what: `reconnect ${i} logged`, timeoutMs: 10_000 },
      );
      await waitForDevice(g, device.id, (d) => d.connected === true, `connected again (${i})`);
    }
    const drops = find(lines, 'device connection dropped; reconnecting', device.id);
    expect(drops).toHaveLength(5);
    for (const [i, drop] of drops.entries()) {
      expect(drop).toMatchObject({ level: INFO, reason: expect.any(String), attempt: i + 1 });
      // Backoff: equal jitter under a ceiling that doubles from 20 ms up to 100 ms.
      const ceiling = Math.min(100, 20 * 2 ** i);
      expect(drop.reconnectInMs).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
      expect(drop.reconnectInMs).toBeLessThanOrEqual(ceiling);
    }
    const loops = find(lines, 'device reconnecting in a loop', device.id);
    expect(loops).toEqual([expect.objectContaining({ level: WARN, drops: 5 })]);

    const out = await g.request('POST', `/devices/${device.id}/logout`);
    expect(out.status).toBe(200);
    expect(find(lines, 'device logged out', device.id)).toEqual([
      expect.objectContaining({ level: INFO, phone, reason: expect.any(String) }),
    ]);

    const all = raw.join('\n');
    expect(all).not.toContain(text);
    expect(all).not.toContain(secret);
    expect(all).not.toContain(TEST_TOKEN);
    expect(all).not.toContain(session!);
  });

  it('logs a QR that expired unscanned', async () => {
    const { g, lines } = await start(1);
    const created = await g.request('POST', '/devices', { package: 'BETA', name: 'never scanned' });
    const id = created.body.data.id as number;
    expect((await g.request('GET', `/devices/${id}/qr?response_type=url`)).status).toBe(200);
    const expired = await waitFor(
      () => find(lines, 'QR expired: no phone scanned it within the pairing window', id),
      (found) => found.length === 1,
      { what: 'the expiry logged', timeoutMs: 10_000 },
    );
    expect(expired[0]).toMatchObject({ level: INFO, pairingWindowMs: 1000 });
    expect((await g.request('GET', `/devices/${id}`)).body.data.paired_status).toBe('EXPIRED');
  });
});

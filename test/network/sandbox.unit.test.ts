/**
 * The sandbox running in-process: the shared behaviour suite, persistence
 * across two network instances, and that close() leaves no timer behind.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { pair, reconnect, Recorder } from './helpers.js';
import { sandboxSuite } from './sandbox-suite.js';

sandboxSuite('in-process', async (options) => {
  const network = createSandboxNetwork(options);
  return { network, close: () => network.close() };
});

describe('in-process sandbox', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-state-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps sessions, phone settings and groups across instances with statePath', async () => {
    const statePath = join(dir, 'nested', 'sandbox.json');
    const first = createSandboxNetwork({ statePath, deliveryDelayMs: 1 });
    const device = await pair(first, 1, '4915112345678');
    await first.sandbox.upsertPhone({
      phone: '4917612345678',
      name: 'Kept',
      online: false,
      about: 'Kept too',
      picture_url: 'https://pics.example/kept.jpg',
    });
    const created = await first.sandbox.createGroup('Durable', [{ phone: '4915112345678', admin: true }]);
    // Settings are durable too.
    const group = await device.connection.updateGroup(created.id, {
      onlyAdminsCanSend: true,
      disappearingSeconds: 86_400,
    });
    // So is the group's picture.
    await device.connection.setGroupPicture(created.id, { mimetype: 'image/png', base64: 'iVBORw0KGgo=' });
    const pictured = await device.connection.getGroup(created.id);
    expect(pictured.pictureId).toMatch(/^https:\/\/sandbox\.invalid\/pictures\/[0-9a-f]{32}\.png$/);
    await device.connection.sendMessage({ id: 'x', to: '4915199998888', content: { type: 'chat', text: 'x' } });
    await first.close();
    const saved = JSON.parse(readFileSync(statePath, 'utf8')) as { sessions: unknown[] };
    expect(saved.sessions).toHaveLength(1);

    const second = createSandboxNetwork({ statePath });
    try {
      const back = await reconnect(second, 1, device.session);
      expect(back.phone).toBe('4915112345678');
      expect(await back.connection.listGroups()).toEqual([{ ...group, pictureId: pictured.pictureId }]);
      expect(await second.sandbox.getPhone('4917612345678')).toMatchObject({
        name: 'Kept',
        online: false,
        about: 'Kept too',
        picture_url: 'https://pics.example/kept.jpg',
        inbox: [],
      });
      await expect(second.sandbox.getPhone('4915199998888')).rejects.toMatchObject({ status: 404 });
    } finally {
      await second.close();
    }
  });

  it('releases every timer on close', async () => {
    // Fake timers count the world's timers even though they are unref'd (which hides them from the event loop).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const network = createSandboxNetwork({ qrRotateMs: 1000, deliveryDelayMs: 1000, readDelayMs: 1000 });
      const rec = new Recorder();
      network.connect({ deviceId: 1, session: null }, rec.handler);
      await vi.advanceTimersByTimeAsync(1);
      const qr = rec.of('qr')[0]?.qr ?? '';
      await network.sandbox.scan(qr, '4915112345678');
      const pairing = network.connect({ deviceId: 2, session: null }, () => undefined);
      await vi.advanceTimersByTimeAsync(1);
      const [device] = rec.of('paired');
      expect(device).toBeDefined();
      const connection = network.connect({ deviceId: 1, session: device?.session ?? '' }, rec.handler);
      await vi.advanceTimersByTimeAsync(1);
      await connection.sendMessage({ id: 'slow', to: '4917612345678', content: { type: 'chat', text: 'x' } });
      expect(vi.getTimerCount()).toBe(2); // the QR rotation of device 2 and the delivery
      pairing.close();
      expect(vi.getTimerCount()).toBe(1);
      await network.close();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

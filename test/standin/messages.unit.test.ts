// Messages through the stand-in with the pinned library as the linked device and the stand-in's fake phones on
// the other side: text each way with server acks, delivery and read receipts, LID addressing, media of every
// kind (the same bytes on both ends), and groups with sender keys. The scenarios run in a process of their own.
import { afterAll, describe, expect, it } from 'vitest';
import { runScenario, stopScenarios } from './scenario.js';

describe('the WhatsApp stand-in: messages', () => {
  afterAll(() => stopScenarios());

  it('carries text both ways, with delivery and read receipts and the phone number beside the LID', async () => {
    const r = await runScenario('messages');
    expect(r.received).toMatchObject({ from: '15550100010', type: 'text', text: 'hello phone' });
    expect(r.statuses).toEqual(expect.arrayContaining([3, 4]));
    expect(r.read).toEqual({ read: true });
    expect(r.incoming.key.remoteJid).toMatch(/@lid$/);
    expect(r.incoming.key.remoteJidAlt).toBe('15550100011@s.whatsapp.net');
    expect(r.incoming.pushName).toBe('Phone 15550100011');
    expect(r.phoneSent).toMatchObject({ to: '15550100010', text: 'hello device' });
    expect(r.lidOnly.remoteJid).toMatch(/@lid$/);
    expect(r.lidOnly.remoteJidAlt).toBeUndefined();
  });

  it('carries media of every kind over its HTTPS host, hash-checked on both ends', async () => {
    const r = await runScenario('media');
    for (const kind of ['image', 'document', 'audio', 'video', 'sticker'])
      expect(r[kind], kind).toMatchObject({ type: kind, media_sha256: r.sha });
    expect(r.image.text).toBe('an image');
    expect(r.downloaded).toBe(r.sha);
    expect(r.caption).toBe('from the phone');
  });

  it('runs groups with sender keys: created by a phone, sent to and received from, members added and removed', async () => {
    const r = await runScenario('groups');
    expect(r.created).toEqual({ id: r.id, subject: 'Team', size: 3 });
    expect(r.participating).toEqual([r.id]);
    for (const m of r.atPhones) expect(m).toMatchObject({ from: '15550100030', text: 'hello group', group: r.id });
    expect(r.incoming.text).toBe('hello from a member');
    expect(r.incoming.participant).toMatch(/@lid$/);
    expect(r.incoming.participantAlt).toBe('15550100032@s.whatsapp.net');
    expect(r.added).toEqual(['200']);
    expect(r.update.action).toBe('add');
    expect(r.removed).toEqual(['200']);
    expect(r.removal.action).toBe('remove');
    expect(r.size).toBe(3);
  });
});

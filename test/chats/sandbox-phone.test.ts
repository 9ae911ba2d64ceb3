// DECISIONS 16 on the sandbox: the device's own phone archives, pins and mutes a chat
// (`PATCH /sandbox/phones/{phone}/chats/{chat}`), the device hears it (`chat_changed`) and `GET /chats` shows it;
// and what the sandbox keeps of a device (chat settings, its own profile, its blocklist) survives a gateway
// restart on the same data directory (sandbox-state.json), as its pairing does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  newStoreLocation,
  noStoreAvailable,
  startGateway,
  type StoreLocation,
  type TestGateway,
} from '../helpers/gateway.js';
import { createPairedDevice, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { adminGroup, numbers } from '../groups/helpers.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };
const fresh = numbers('62845');
const MUTED = '2031-02-03T04:05:06.000Z';

describe.skipIf(noStoreAvailable)('chat settings changed on the sandbox phone', () => {
  let gw: TestGateway;
  let device: string;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    device = (await createPairedDevice(gw, '6284599000001')).phone;
  });
  afterAll(() => gw?.close());

  const onPhone = (chat: string, body: unknown, phone = device) =>
    gw.request('PATCH', `/sandbox/phones/${phone}/chats/${chat}`, body);
  const chat = async (id: string) =>
    ((await gw.request('GET', `/chats?device=${device}&limit=100`)).body.data as any[]).find((c) => c.id === id);

  it('the device hears the phone’s archive, pin and mute; GET /chats shows them', async () => {
    const [friend] = fresh(1) as [string];
    const res = await onPhone(friend, { archived: true, pinned: true, muted_until: MUTED });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      code: 200,
      message: 'Chat changed on the phone',
      data: { chat: friend, archived: true, pinned: true, muted_until: MUTED, last_message_id: null },
    });
    const shown = await waitFor(
      () => chat(friend),
      (c) => c?.muted_until === MUTED,
      { what: 'the phone’s change stored' },
    );
    expect(shown).toMatchObject({ id: friend, archived: true, pinned: true, muted_until: MUTED, last_message: null });
    expect((await gw.request('GET', `/sandbox/phones/${device}`)).body.data.chats).toContainEqual(
      expect.objectContaining({ chat: friend, archived: true, pinned: true, muted_until: MUTED }),
    );

    expect((await onPhone(friend, { archived: false, muted_until: null })).status).toBe(200);
    const after = await waitFor(
      () => chat(friend),
      (c) => c?.archived === false,
      { what: 'unarchived' },
    );
    expect(after).toMatchObject({ archived: false, pinned: true, muted_until: null });

    const group = await adminGroup(gw, device, 'Phone side', fresh(1));
    expect((await onPhone(group.jid, { pinned: true })).status).toBe(200);
    await waitFor(
      () => chat(group.jid),
      (c) => c?.pinned === true,
      { what: 'the group pinned' },
    );
  });

  it('refuses what the phone cannot do, each at its boundary', async () => {
    const [friend, stranger] = fresh(2) as [string, string];
    const refused = async (res: { status: number; body: any }, status: number, message: string) => {
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body).toMatchObject({ code: status, status, message });
    };
    await refused(await onPhone(friend, {}), 400, 'Validation failed');
    await refused(await onPhone(friend, { archived: 'yes' }), 400, 'Validation failed');
    await refused(await onPhone(friend, { muted_until: '2001-01-01T00:00:00Z' }), 400, 'Validation failed');
    await refused(await onPhone('abc', { archived: true }), 400, 'Invalid phone number format');
    await refused(await onPhone('120363000000009999@g.us', { archived: true }), 404, 'Group not found');
    // A number no device of the account is paired with has no chats the gateway could hear of.
    await refused(await onPhone(friend, { archived: true }, stranger), 404, 'Device not found');
  });
});

describe.skipIf(noStoreAvailable)('what the sandbox keeps of a device, across a restart', () => {
  const running: TestGateway[] = [];
  let location: StoreLocation | undefined;
  afterAll(async () => {
    for (const gw of running) await gw.close();
    await location?.drop();
  });

  it('chat settings, the own profile and the blocklist read back the same after a restart', async () => {
    location = await newStoreLocation();
    const first = await startGateway({ location, build, config: { sendIntervalMs: 0 } });
    running.push(first);
    const paired = await createPairedDevice(first, '6284599000002');
    const device = paired.phone;
    const [archivedHere, pinnedOnPhone, blocked] = fresh(3) as [string, string, string];

    const patched = await first.request('PATCH', `/chats/${archivedHere}`, {
      device,
      archived: true,
      muted_until: MUTED,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(
      (await first.request('PATCH', `/sandbox/phones/${device}/chats/${pinnedOnPhone}`, { pinned: true })).status,
    ).toBe(200);
    const profile = await first.request('PUT', `/devices/${paired.id}/profile`, {
      name: 'Front desk',
      about: 'Open 9–5',
    });
    expect(profile.status, JSON.stringify(profile.body)).toBe(200);
    expect((await first.request('POST', `/contacts/${blocked}/block`, { device })).status).toBe(200);
    const before = (await first.request('GET', `/sandbox/phones/${device}`)).body.data.chats;
    expect(before).toHaveLength(2);
    await first.close({ keepStore: true });

    const second = await startGateway({ location, build, config: { sendIntervalMs: 0 } });
    running.push(second);
    await waitForDevice(second, paired.id, (d) => d.connected === true, 'reconnected after the restart');
    expect((await second.request('GET', `/sandbox/phones/${device}`)).body.data.chats).toEqual(before);
    expect((await second.request('GET', `/devices/${paired.id}/profile`)).body.data).toMatchObject({
      name: 'Front desk',
      about: 'Open 9–5',
    });
    expect((await second.request('GET', `/contacts/blocked?device=${device}`)).body.data).toEqual([{ phone: blocked }]);
  });
});

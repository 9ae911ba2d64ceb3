// Issue 22, item 4: every account has its own view of a virtual phone. What one account sets on a
// phone (registered, online, privacy, auto_read, name) changes only what its own devices meet and
// what it is shown; another account talking to the same phone sees its own settings and its own
// messages only, and its messages keep being delivered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { sandboxQrText } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const PHONE = '6281250000100'; // a virtual phone both accounts talk to
const A_DEVICE = '6281250000001';
const B_DEVICE = '6281250000002';

describe.skipIf(noStoreAvailable)('per-account views of a virtual phone', () => {
  let gw: TestGateway;
  let b: string;

  async function paired(phone: string, token: string) {
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: phone }, token);
    const id = created.body.data.id as number;
    const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, id, token), phone }, token);
    expect(scan.status, JSON.stringify(scan.body)).toBe(200);
    await waitFor(
      async () => (await gw.request('GET', `/devices/${id}`, undefined, token)).body.data,
      (d) => d.paired_status === 'PAIRED' && d.connected === true,
      { what: `${phone} paired` },
    );
  }

  async function send(device: string, token: string, text: string, receiver = PHONE): Promise<string> {
    const res = await gw.request('POST', '/messages', { device, receiver, type: 'chat', params: { text } }, token);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.id;
  }

  const statusOf = async (id: string, token: string) =>
    (await gw.request('GET', `/messages/${id}`, undefined, token)).body.data.status as string;
  const view = async (token: string, phone = PHONE) =>
    (await gw.request('GET', `/sandbox/phones/${phone}`, undefined, token)).body.data;

  beforeAll(async () => {
    gw = await startGateway({ config: { sendIntervalMs: 0 }, build: { sandbox: { deliveryDelayMs: 1 } } });
    const account = await gw.app.services.accounts.createAccount('other');
    b = (await gw.app.services.accounts.createToken(account.id, 'other')).token;
    await paired(A_DEVICE, TEST_TOKEN);
    await paired(B_DEVICE, b);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('B marking a phone A talks to as unregistered leaves A sending and A’s view unchanged', async () => {
    const before = await send(A_DEVICE, TEST_TOKEN, 'A before');
    await waitFor(
      () => statusOf(before, TEST_TOKEN),
      (s) => s === 'delivered',
      { what: 'A’s first message delivered' },
    );
    const bMessage = await send(B_DEVICE, b, 'B hello');
    await waitFor(
      () => statusOf(bMessage, b),
      (s) => s === 'delivered',
      { what: 'B’s message delivered' },
    );

    const changed = await gw.request(
      'POST',
      '/sandbox/phones',
      { phone: PHONE, registered: false, name: 'B calls it this', auto_read: true, privacy: 'nobody' },
      b,
    );
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.data).toMatchObject({ registered: false, name: 'B calls it this', auto_read: true });

    // A's next message is accepted, sent and delivered: the phone is registered as far as A's devices go.
    const after = await send(A_DEVICE, TEST_TOKEN, 'A after');
    await waitFor(
      () => statusOf(after, TEST_TOKEN),
      (s) => s === 'delivered',
      { what: 'A’s second message delivered' },
    );
    // ...and not read: auto_read is B's setting, not A's.
    expect((await gw.request('GET', `/messages/${after}`)).body.data.read_at).toBeNull();

    const mine = await view(TEST_TOKEN);
    expect(mine).toMatchObject({ phone: PHONE, registered: true, name: null, auto_read: false, privacy: 'everyone' });
    expect(mine.inbox.map((e: { message_id: string }) => e.message_id)).toEqual([before, after]);
    expect(JSON.stringify(mine)).not.toContain('B hello');

    const theirs = await view(b);
    expect(theirs).toMatchObject({ registered: false, name: 'B calls it this', auto_read: true, privacy: 'nobody' });
    expect(theirs.inbox.map((e: { message_id: string }) => e.message_id)).toEqual([bMessage]);

    // In B's own view the phone is unregistered: B's devices cannot reach it.
    const refused = await send(B_DEVICE, b, 'B after');
    await waitFor(
      () => statusOf(refused, b),
      (s) => s === 'failed',
      { what: 'B’s message to its unregistered phone failed' },
    );
  });

  it('a phone offline in B’s view holds only B’s messages; A’s arrive', async () => {
    const phone = '6281250000101';
    expect((await gw.request('POST', '/sandbox/phones', { phone, online: false }, b)).status).toBe(200);
    const fromA = await send(A_DEVICE, TEST_TOKEN, 'A to offline-for-B', phone);
    const fromB = await send(B_DEVICE, b, 'B to offline-for-B', phone);
    await waitFor(
      () => statusOf(fromA, TEST_TOKEN),
      (s) => s === 'delivered',
      { what: 'A’s message delivered' },
    );
    // Taken by the network, and held there: the phone is offline in B's view.
    await waitFor(
      () => statusOf(fromB, b),
      (s) => s === 'sent',
      { what: 'B’s message sent' },
    );
    expect((await view(b, phone)).inbox).toEqual([]);
    // Online again in B's view: B's held message arrives, A's view is untouched.
    expect((await gw.request('POST', '/sandbox/phones', { phone, online: true }, b)).status).toBe(200);
    await waitFor(
      () => statusOf(fromB, b),
      (s) => s === 'delivered',
      { what: 'B’s held message delivered' },
    );
    expect((await view(TEST_TOKEN, phone)).inbox.map((e: { message_id: string }) => e.message_id)).toEqual([fromA]);
    expect((await view(b, phone)).inbox.map((e: { message_id: string }) => e.message_id)).toEqual([fromB]);
  });

  it('a group B creates with a member unregistered in B’s view is refused, while A’s view lets A add it', async () => {
    const phone = '6281250000102';
    expect((await gw.request('POST', '/sandbox/phones', { phone, registered: false }, b)).status).toBe(200);
    const inB = await gw.request(
      'POST',
      '/sandbox/groups',
      { name: 'B group', members: [{ phone: B_DEVICE, admin: true }, { phone }] },
      b,
    );
    expect(inB.status).toBe(400);
    const inA = await gw.request('POST', '/sandbox/groups', {
      name: 'A group',
      members: [{ phone: A_DEVICE, admin: true }, { phone }],
    });
    expect(inA.status, JSON.stringify(inA.body)).toBe(201);
  });
});

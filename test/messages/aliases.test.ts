// docs/internals.md, Whatspie compatibility (issue 11): bodies in the older shapes Whatspie clients send, exactly as they send
// them (JSON), reach the sandbox phone's inbox with the canonical content, and the answer shows the
// canonical message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const build = {
  sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
  dispatch: { retryBaseMs: 50, retryMaxMs: 200 },
  connections: { reconnectBaseMs: 20, reconnectMaxMs: 100 },
};

describe.skipIf(noStoreAvailable)('older send shapes', () => {
  let gw: TestGateway;
  let sender: string;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    sender = (await createPairedDevice(gw, '6281500000071')).phone;
  });
  afterAll(() => gw?.close());

  const inbox = async (phone: string) =>
    ((await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.inbox ?? []) as any[];

  it.each([
    [
      'a chat with no type',
      { receiver: '6281599990071', message: 'Hello from an old client' },
      'chat',
      { text: 'Hello from an old client' },
    ],
    ['type "text"', { receiver: '6281599990072', type: 'text', message: 'hi' }, 'chat', { text: 'hi' }],
    [
      'a location at the top level',
      { receiver: '6281599990073', type: 'location', latitude: -6.2, longitude: 106.8, location_name: 'Office' },
      'location',
      { latitude: -6.2, longitude: 106.8, name: 'Office' },
    ],
    [
      'a location as params.lat/long',
      { receiver: '6281599990074', type: 'location', params: { lat: 1.5, long: 2.5 } },
      'location',
      { latitude: 1.5, longitude: 2.5 },
    ],
    [
      'quick replies as params.buttons',
      {
        receiver: '6281599990075',
        type: 'template',
        params: { text: 'Choose', buttons: [{ buttonId: 'yes', buttonText: { displayText: 'Yes' } }] },
      },
      'template',
      { text: 'Choose', buttons: [{ index: 1, quickReplyButton: { displayText: 'Yes', id: 'yes' } }] },
    ],
  ])('%s reaches the inbox with the canonical content', async (_label, sent, type, content) => {
    const res = await gw.request('POST', '/messages', { device: sender, ...sent });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.type).toBe(type);
    const receiver = (sent as { receiver: string }).receiver;
    const received = await waitFor(
      async () => (await inbox(receiver)).filter((entry) => entry.message_id === res.body.data.id),
      (entries) => entries.length === 1,
      { what: 'the message in the inbox' },
    );
    expect(received[0]).toMatchObject({ from: sender, type, content });
  });
});

// Issue 24, item 8: asking for a pairing code makes Baileys name the number in the credentials at once (no
// device part, nothing confirmed). That is not a paired session: when the attempt's QR codes run out (408)
// the attempt goes on with a new socket that registers afresh, so it can still end EXPIRED at the pairing
// window, never `disconnected`. And the browser label is one WhatsApp accepts for pairing codes.
import { getCompanionWebClientType } from 'baileys';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GATEWAY_BROWSER } from '../../../src/network/whatsapp/browser.js';
import { noStoreAvailable } from '../../helpers/gateway.js';
import { Recorder } from '../helpers.js';
import { SLOW, WhatsAppHarness } from './harness.js';

const ME = '4915100000061';

describe('the browser label', () => {
  it('is a browser WhatsApp knows (a pairing code for an unknown web client is refused on the phone)', () => {
    expect(getCompanionWebClientType(GATEWAY_BROWSER as [string, string, string])).toBe(1); // CHROME
  });
});

describe.skipIf(noStoreAvailable)('a pairing code attempt', () => {
  let h: WhatsAppHarness;
  beforeEach(async () => {
    h = await WhatsAppHarness.open();
  });
  afterEach(() => h.close());

  it('whose QR codes run out goes on with a new socket that registers afresh, with no event', async () => {
    const rec = new Recorder();
    const connection = h.network.connect({ deviceId: 1, session: null }, rec.handler);
    const first = await h.wa.socket(0);
    first.connection({ qr: 'qr-1' });
    await rec.wait('qr', undefined, 0, SLOW);
    expect(await connection.requestPairingCode(ME)).toBe('ABCD-2345');
    first.close(408, 'QR refs attempts ended');
    const second = await h.wa.socket(1);
    // Without a confirmed identity the library registers again instead of logging in as the bare number.
    expect(second.auth.creds.me).toBeUndefined();
    second.connection({ qr: 'qr-2' });
    await rec.wait('qr', (e) => e.qr === 'qr-2', 0, SLOW);
    expect(rec.types()).toEqual(['qr', 'qr']);
    // The code is still the way in: a new one is asked on the new socket, and the phone confirming it pairs.
    expect(await connection.requestPairingCode(ME)).toBe('ABCD-2345');
    second.pairSuccess(`${ME}:3@s.whatsapp.net`);
    expect((await rec.wait('paired', undefined, 0, SLOW)).phone).toBe(ME);
  });
});

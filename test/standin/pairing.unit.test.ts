// The stand-in's handshake and pairing with the pinned library, unmodified, as the client (the scenarios run in
// a process of their own, see run-scenario.ts): QR and code pairing end in the 515 restart and a login with a LID.
import { createRequire } from 'node:module';
import { proto } from 'baileys';
import { afterAll, describe, expect, it } from 'vitest';
import { makeNoiseIdentity } from '../../standin/certs.js';
import { runScenario, stopScenarios } from './scenario.js';

// libsignal's own check, which returns false for a bad signature (the library's Curve.verify drops that result).
const curve = createRequire(import.meta.url)('libsignal/src/curve.js') as {
  verifySignature(pub: Buffer, msg: Uint8Array, sig: Uint8Array): boolean;
};
const withType = (key: Uint8Array) => Buffer.concat([Buffer.from([5]), key]);

describe('the WhatsApp stand-in: handshake and pairing', () => {
  afterAll(() => stopScenarios());

  it('certifies its static key with a chain that verifies against its own root and no other', () => {
    const identity = makeNoiseIdentity();
    const chain = proto.CertChain.decode(identity.chain);
    const intermediate = proto.CertChain.NoiseCertificate.Details.decode(chain.intermediate!.details!);
    const leaf = proto.CertChain.NoiseCertificate.Details.decode(chain.leaf!.details!);
    expect(
      curve.verifySignature(
        withType(identity.root.public),
        chain.intermediate!.details!,
        chain.intermediate!.signature!,
      ),
    ).toBe(true);
    expect(
      curve.verifySignature(
        withType(Buffer.alloc(32, 9)),
        chain.intermediate!.details!,
        chain.intermediate!.signature!,
      ),
    ).toBe(false);
    expect(curve.verifySignature(withType(intermediate.key!), chain.leaf!.details!, chain.leaf!.signature!)).toBe(true);
    expect(Buffer.from(leaf.key!)).toEqual(identity.static.public);
    expect(intermediate.issuerSerial).toBe(0);
  });

  it('records that the pinned library goes on with a chain from another root (its signature check is a no-op)', async () => {
    // Not the stand-in's behaviour but the library's: Curve.verify ignores libsignal's boolean result. When a
    // library update starts checking, this fails, and GATEWAY_WHATSAPP_ROOT_KEY becomes required for the stand-in.
    expect(await runScenario('untrusted-root')).toEqual({ qrShown: true, closed: false });
  });

  it('links a device by QR: pair-success, the 515 restart, a login with a LID; unlinking ends it with 401', async () => {
    const r = await runScenario('qr');
    expect(r.me.id).toMatch(/^15550100001:\d+@s\.whatsapp\.net$/);
    expect(r.me.lid).toMatch(new RegExp(`^${r.phone.lid.split('@')[0]}:\\d+@lid$`));
    expect(r.phone.linked_devices).toEqual([r.me.id]);
    // The short history sync after pairing carries the LID of every number the phone knows.
    expect(r.history.mappings).toBeGreaterThanOrEqual(2);
    expect(r.history.mapping).toMatch(/@lid$/);
    expect(r.logins).toBe(1);
    expect(r.unlink).toEqual({ unlinked: 1 });
    expect(r.unlinkedWith).toBe(401);
    expect(r.relogin).toBe(401);
    expect(r.linkedAfter).toEqual([]);
  });

  it('links a device by code; a wrong code is refused and the right one still works', async () => {
    const r = await runScenario('code');
    expect(r.wrong).toEqual({ status: 400, body: { error: 'the code does not match the one the device shows' } });
    expect(r.right).toEqual({ status: 200, body: { paired: true } });
    expect(r.restart).toBe(515);
    expect(r.me.id).toMatch(/^15550100002:\d+@s\.whatsapp\.net$/);
  });

  it('ends streams with 503 on a drop, answers logins with 515 under restart_loop, and unknown IQs with 501', async () => {
    const r = await runScenario('faults');
    expect(r.drop.dropped).toBeGreaterThan(0);
    expect(r.droppedWith).toBe(503);
    expect(r.looped).toBe(515);
    expect(r.unknownIq).toMatch(/feature-not-implemented/);
  });
});

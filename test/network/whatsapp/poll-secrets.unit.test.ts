// A poll's secret is kept sealed in the session's key store before the poll is sent, and a retry of the same send
// takes the one kept (src/network/whatsapp/poll-secrets.ts); a store that refuses the write leaves no secret behind
// and the caller does not send.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NetworkStateChanges, NetworkStateWriter } from '../../../src/network/state.js';
import { POLL_SECRET_KIND, keepPollSecret, readPollSecret } from '../../../src/network/whatsapp/poll-secrets.js';
import { Sealer } from '../../../src/network/whatsapp/seal.js';

/** The key part of a writer, in memory; `refuse` makes every write fail. */
function memoryWriter(refuse = false) {
  const keys = new Map<string, Uint8Array>();
  const writer = {
    session: 's1',
    readKeys: async (kind: string, ids: readonly string[]) =>
      new Map(ids.flatMap((id) => (keys.has(`${kind}/${id}`) ? [[id, keys.get(`${kind}/${id}`)!]] : []))),
    write: async (changes: NetworkStateChanges) => {
      if (refuse) throw new Error('store unavailable');
      for (const change of changes.keys ?? []) keys.set(`${change.kind}/${change.id}`, change.value!);
    },
  } as unknown as NetworkStateWriter;
  return { writer, keys };
}

describe("a poll's secret", () => {
  const sealer = new Sealer({ current: randomBytes(32), previous: [] });

  it('is 32 bytes, kept sealed under the poll id, and the same on a retry', async () => {
    const { writer, keys } = memoryWriter();
    const at = { writer, sealer, session: 's1' };
    const secret = await keepPollSecret(at, '3EB0POLL');
    expect(secret).toHaveLength(32);
    const stored = keys.get(`${POLL_SECRET_KIND}/3EB0POLL`)!;
    expect(Buffer.from(stored).includes(Buffer.from(secret))).toBe(false);
    expect(await keepPollSecret(at, '3EB0POLL')).toEqual(secret);
    expect(await readPollSecret(at, '3EB0POLL')).toEqual(secret);
    expect(await readPollSecret(at, 'OTHER')).toBeNull();
    expect(await keepPollSecret(at, 'OTHER')).not.toEqual(secret);
  });

  it('is not answered when it could not be kept', async () => {
    const { writer } = memoryWriter(true);
    await expect(keepPollSecret({ writer, sealer, session: 's1' }, 'P')).rejects.toThrow('store unavailable');
  });
});

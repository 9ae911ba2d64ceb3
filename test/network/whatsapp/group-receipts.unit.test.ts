// Group members' receipts as Baileys hands them over (`message-receipt.update`) → the seam's receipts with the member
// (src/network/whatsapp/group-receipts.ts; docs/whatsapp.md, Group receipts): a LID member resolved to its number
// through the library's mapping or kept as it came, the device's own account skipped, a read passed on as the delivery
// too, the order kept while LIDs resolve, and group metadata teaching the mapping members' numbers.
import { describe, expect, it } from 'vitest';
import { ulid } from 'ulid';
import type { BaileysEventMap } from 'baileys';
import type { NetworkEvent } from '../../../src/network/network.js';
import { GroupReceipts, groupReceipts, learnMembers } from '../../../src/network/whatsapp/group-receipts.js';
import { toNetworkId } from '../../../src/network/whatsapp/ids.js';
import { waitFor } from '../../helpers/wait.js';

type Update = BaileysEventMap['message-receipt.update'][number];

const GROUP = '120363000000000002@g.us';
const KNOWN_LID = '111111111111111@lid';
const UNKNOWN_LID = '222222222222222@lid';
const ME = { id: '6281500000001:3@s.whatsapp.net', lid: '999999999999999:3@lid' };

const mapping: Record<string, string> = { [KNOWN_LID]: '6281500000002:0@s.whatsapp.net' };
const resolve = async (lid: string) => mapping[lid] ?? null;

function update(id: string, userJid: string, receipt: Omit<Update['receipt'], 'userJid'>, fromMe = true): Update {
  return { key: { remoteJid: GROUP, id: toNetworkId(id)!, fromMe }, receipt: { userJid, ...receipt } };
}

describe('group receipts from the library', () => {
  it('names each member by number: a LID through the mapping, an unknown LID as it came, a number without its device', async () => {
    const id = ulid();
    const events = await groupReceipts(
      [
        update(id, KNOWN_LID, { receiptTimestamp: 1_700_000_000 }),
        update(id, UNKNOWN_LID, { receiptTimestamp: 1_700_000_001 }),
        update(id, '6281500000003:5@s.whatsapp.net', { receiptTimestamp: 1_700_000_002 }),
      ],
      resolve,
      ME,
    );
    expect(events).toEqual([
      {
        type: 'message_status',
        id,
        status: 'delivered',
        at: new Date(1_700_000_000_000),
        participant: '6281500000002',
      },
      { type: 'message_status', id, status: 'delivered', at: new Date(1_700_000_001_000), participant: UNKNOWN_LID },
      {
        type: 'message_status',
        id,
        status: 'delivered',
        at: new Date(1_700_000_002_000),
        participant: '6281500000003',
      },
    ]);
  });

  it('passes a read (or a play) on as the delivery and the read, the delivery at its own time when it came with it', async () => {
    const id = ulid();
    const events = await groupReceipts(
      [
        update(id, KNOWN_LID, { readTimestamp: 1_700_000_010 }),
        update(id, '6281500000003@s.whatsapp.net', { receiptTimestamp: 1_700_000_005, readTimestamp: 1_700_000_011 }),
        update(id, '6281500000004@s.whatsapp.net', { playedTimestamp: 1_700_000_012 }),
      ],
      resolve,
      ME,
    );
    expect(events.map((e) => [e.type === 'message_status' && e.status, (e as any).participant, (e as any).at])).toEqual(
      [
        ['delivered', '6281500000002', new Date(1_700_000_010_000)],
        ['read', '6281500000002', new Date(1_700_000_010_000)],
        ['delivered', '6281500000003', new Date(1_700_000_005_000)],
        ['read', '6281500000003', new Date(1_700_000_011_000)],
        ['delivered', '6281500000004', new Date(1_700_000_012_000)],
        ['read', '6281500000004', new Date(1_700_000_012_000)],
      ],
    );
  });

  it("skips the device's own account, messages not ours, and entries with no time", async () => {
    const id = ulid();
    const events = await groupReceipts(
      [
        update(id, '6281500000001:0@s.whatsapp.net', { receiptTimestamp: 1 }),
        update(id, '999999999999999@lid', { receiptTimestamp: 1 }),
        update(id, KNOWN_LID, { receiptTimestamp: 1 }, false),
        {
          key: { remoteJid: GROUP, id: '3EB0ABCDEF0123456789AB', fromMe: true },
          receipt: { userJid: KNOWN_LID, receiptTimestamp: 1 },
        },
        update(id, KNOWN_LID, {}),
      ],
      resolve,
      ME,
    );
    expect(events).toEqual([]);
  });

  it('keeps the order of batches although a LID takes longer to resolve than a number', async () => {
    const id = ulid();
    const seen: NetworkEvent[] = [];
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const receipts = new GroupReceipts(
      async (lid) => {
        await slow;
        return mapping[lid] ?? null;
      },
      () => ME,
      (event) => seen.push(event),
      (error) => {
        throw error;
      },
    );
    receipts.handle([update(id, KNOWN_LID, { receiptTimestamp: 1_700_000_020 })]);
    receipts.handle([update(id, '6281500000003@s.whatsapp.net', { readTimestamp: 1_700_000_021 })]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
    release();
    await waitFor(
      async () => seen.length,
      (n) => n === 3,
      { what: 'both batches passed on' },
    );
    expect(seen.map((e) => (e as any).participant)).toEqual(['6281500000002', '6281500000003', '6281500000003']);
  });

  it('teaches the mapping the numbers group metadata gives beside LIDs (and LIDs beside numbers)', async () => {
    const stored: Array<{ lid: string; pn: string }> = [];
    const lidMapping = {
      storeLIDPNMappings: async (pairs: typeof stored) => void stored.push(...pairs),
      getPNForLID: resolve,
    };
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => void warnings.push(args) };
    await learnMembers(
      { signalRepository: { lidMapping } },
      [
        {
          participants: [
            { id: '333333333333333@lid', phoneNumber: '6281500000005@s.whatsapp.net' },
            { id: '6281500000006@s.whatsapp.net', lid: '444444444444444@lid' },
            { id: '555555555555555@lid' },
          ],
        },
      ],
      logger,
    );
    expect(warnings).toEqual([]);
    expect(stored).toEqual([
      { lid: '333333333333333@lid', pn: '6281500000005@s.whatsapp.net' },
      { lid: '444444444444444@lid', pn: '6281500000006@s.whatsapp.net' },
    ]);
    // A mapping that cannot be stored is a warning, never a failed group look-up.
    const broken = { storeLIDPNMappings: async () => Promise.reject(new Error('store down')), getPNForLID: resolve };
    await learnMembers(
      { signalRepository: { lidMapping: broken } },
      [{ participants: [{ id: '333333333333333@lid', phoneNumber: '6281500000005@s.whatsapp.net' }] }],
      logger,
    );
    expect(warnings).toHaveLength(1);
  });
});

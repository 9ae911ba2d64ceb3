// A group message whose sender is known by LID alone takes the number its group's metadata gives
// (src/network/whatsapp/group-senders.ts): looked up only when needed, bounded in time, never failing the message.
import type { GroupMetadata } from 'baileys';
import { describe, expect, it } from 'vitest';
import type { NetworkEvent } from '../../../src/network/network.js';
import { numberOfMember, resolveGroupSender } from '../../../src/network/whatsapp/group-senders.js';

type Incoming = Extract<NetworkEvent, { type: 'incoming_message' }>;

const LID = '518086388112503@lid';
const GROUP = '120363000000000001@g.us';
const metadata = (participants: object[]) => ({ id: GROUP, subject: 's', participants }) as unknown as GroupMetadata;
const named = metadata([{ id: LID, phoneNumber: '15552350003@s.whatsapp.net' }]);
const event = (over: Partial<Incoming> = {}): Incoming => ({
  type: 'incoming_message',
  id: 'M1',
  from: LID,
  fromLid: LID,
  group: GROUP,
  content: { type: 'chat', text: 'hi' },
  at: new Date(0),
  ...over,
});
const quiet = { warn: () => undefined };

describe("a group sender known by LID alone, from the group's metadata", () => {
  it('finds the number beside a LID member, and the LID beside a numbered one', () => {
    expect(numberOfMember(named, LID)).toBe('15552350003');
    expect(numberOfMember(metadata([{ id: '15552350004@s.whatsapp.net', lid: LID }]), LID)).toBe('15552350004');
    expect(numberOfMember(metadata([{ id: LID }]), LID)).toBeNull();
    expect(numberOfMember(metadata([{ id: '1@lid', phoneNumber: '15552350003@s.whatsapp.net' }]), LID)).toBeNull();
  });

  it('gives the message the number the metadata names', async () => {
    const asked: string[] = [];
    const resolved = await resolveGroupSender(event(), async (g) => (asked.push(g), named), quiet);
    expect(resolved).toMatchObject({ from: '15552350003', fromLid: LID, group: GROUP });
    expect(asked).toEqual([GROUP]);
  });

  it('does not read the metadata for a direct message or a sender with a number', async () => {
    const asked: string[] = [];
    const metadataOf = async (g: string) => (asked.push(g), named);
    const { group: _group, ...direct } = event();
    expect(await resolveGroupSender(direct, metadataOf, quiet)).toEqual(direct);
    const numbered = event({ from: '15552350009' });
    expect(await resolveGroupSender(numbered, metadataOf, quiet)).toEqual(numbered);
    expect(asked).toEqual([]);
  });

  it('goes on under the LID when the metadata fails, names nobody, or is slower than its bound', async () => {
    const warned: unknown[] = [];
    const failing = await resolveGroupSender(event(), () => Promise.reject(new Error('gone')), {
      warn: (o: unknown) => void warned.push(o),
    });
    expect(failing.from).toBe(LID);
    expect(warned).toHaveLength(1);
    expect((await resolveGroupSender(event(), async () => metadata([{ id: LID }]), quiet)).from).toBe(LID);
    const started = Date.now();
    const slow = await resolveGroupSender(event(), () => new Promise<GroupMetadata>(() => undefined), quiet, 50);
    expect(slow.from).toBe(LID);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

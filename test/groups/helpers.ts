// Group set-up through the sandbox control API, as a user of the sandbox would do it.
import { expect } from 'vitest';
import type { Answer, TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Fresh, well-formed numbers that are none of the sandbox's magic numbers
 * (last four digits 0000-0004), under a prefix of the caller's own so test
 * files never share a phone.
 */
export function numbers(prefix: string): (count: number) => string[] {
  let next = 10;
  return (count) => {
    const out: string[] = [];
    while (out.length < count) {
      const phone = `${prefix}${String(next++).padStart(6, '0')}`;
      if (!/000[0-4]$/.test(phone)) out.push(phone);
    }
    return out;
  };
}

/** Creates a group on the network; the device sees it after its sync. */
export async function networkGroup(
  gw: TestGateway,
  name: string,
  members: Array<{ phone: string; admin?: boolean }>,
): Promise<{ id: string; participants: unknown[] }> {
  const res = await gw.request('POST', '/sandbox/groups', { name, members });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

/** Waits until the device's sync has stored the network group, and answers the gateway's group. */
export async function syncedGroup(gw: TestGateway, devicePhone: string, networkId: string, token?: string) {
  const list = await waitFor(
    async () => (await gw.request('GET', `/groups?device=${devicePhone}&per_page=100`, undefined, token)).body.data,
    (groups: any[]) => Array.isArray(groups) && groups.some((g) => g.network_id === networkId),
    { what: `group ${networkId} synced` },
  );
  return list.find((g: any) => g.network_id === networkId);
}

/** A network group with the device as its admin and `others` as members, synced: the gateway's group. */
export async function adminGroup(gw: TestGateway, devicePhone: string, name: string, others: string[] = []) {
  const created = await networkGroup(gw, name, [
    { phone: devicePhone, admin: true },
    ...others.map((phone) => ({ phone })),
  ]);
  return syncedGroup(gw, devicePhone, created.id);
}

export function addMembers(gw: TestGateway, groupId: number, participants: unknown, token?: string): Promise<Answer> {
  return gw.request('POST', `/api/groups/${groupId}/members/add`, { participants }, token);
}

// Group administration on the groups page (issue 27, docs/groups.md, Administering a group) in a real browser against
// the sandbox: choosing participants to promote, demote and remove with the outcome per participant (the creator
// refused), the invite link shown, copied and revoked, another device joining by the link (the revoked one refused
// in the API's words), and leaving after a confirmation. Each change is checked through the API too.
import { describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { copiedText, dashboardSuite, seriousViolations } from './harness.js';

const ADMIN = '6281377000511';
const SECOND = '6281377000512';
const ANA = '6281377000513';
const BUDI = '6281377000514';
const WAIT = { timeout: 15_000 };

interface Participant {
  phone: string;
  admin: null | 'admin' | 'superadmin';
}

describe('group administration on the groups page', () => {
  let gw: TestGateway;
  let adminId: number;
  let secondId: number;
  let groupId: number;

  const { pages, open } = dashboardSuite(async (started) => {
    gw = started;
    adminId = (await createPairedDevice(gw, ADMIN)).id as number;
    secondId = (await createPairedDevice(gw, SECOND)).id as number;
    const created = await gw.request('POST', '/sandbox/groups', {
      name: 'Board',
      members: [{ phone: ADMIN, admin: true }, { phone: ANA }, { phone: BUDI }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const groups = await waitFor(
      async () => (await gw.request('GET', `/groups?device=${ADMIN}`)).body.data as Array<{ id: number }>,
      (list) => list.length === 1,
      { what: 'the group synced', timeoutMs: 10_000 },
    );
    groupId = groups[0]!.id;
  });
  const participants = async (id: number): Promise<Participant[]> =>
    (await gw.request('GET', `/groups/${id}`)).body.data.participants;
  const roleOf = async (phone: string) => (await participants(groupId)).find((p) => p.phone === phone)?.admin;

  it('promotes, demotes and removes the chosen participants, with the outcome per participant', async () => {
    const p = await open('group members admin', `#/devices/${adminId}/groups/${groupId}`);
    const table = p.getByRole('region', { name: 'Participants table' });
    await table.getByRole('rowheader', { name: ANA }).waitFor(WAIT);
    const actions = p.getByRole('group', { name: 'Change the selected participants' });
    // Nothing chosen: nothing to do.
    expect(await actions.getByRole('button', { name: 'Make admin', exact: true }).isDisabled()).toBe(true);

    await p.getByRole('checkbox', { name: `Select ${ANA}` }).check();
    await actions.getByRole('button', { name: 'Make admin', exact: true }).click();
    const outcome = p.getByRole('status').filter({ hasText: 'Members promoted' });
    await outcome.waitFor(WAIT);
    expect(await outcome.textContent()).toContain('Members promoted: 1 promoted, 0 failed.');
    expect(await outcome.getByRole('row').filter({ hasText: ANA }).textContent()).toContain('promoted');
    await expect.poll(() => table.getByRole('row').filter({ hasText: ANA }).textContent()).toContain('admin');
    expect(await roleOf(ANA)).toBe('admin');
    // Done: the choice is cleared.
    expect(await p.getByRole('checkbox', { name: `Select ${ANA}` }).isChecked()).toBe(false);

    // The creator (this device) can be neither demoted nor removed: its own row says so, the other one is done.
    await p.getByRole('checkbox', { name: `Select ${ANA}` }).check();
    await p.getByRole('checkbox', { name: `Select ${ADMIN}` }).check();
    await actions.getByRole('button', { name: 'Make member', exact: true }).click();
    const demoted = p.getByRole('status').filter({ hasText: 'Members demoted' });
    await demoted.waitFor(WAIT);
    expect(await demoted.textContent()).toContain('1 demoted, 1 failed');
    expect(await demoted.getByRole('row').filter({ hasText: ANA }).textContent()).toContain('demoted');
    expect(await demoted.getByRole('row').filter({ hasText: ADMIN }).textContent()).toContain(
      'the group’s creator: cannot be removed or demoted (FORBIDDEN)',
    );
    expect(await roleOf(ANA)).toBeNull();
    expect(await roleOf(ADMIN)).toBe('superadmin');

    // Removing asks first; Cancel changes nothing.
    await p.getByRole('checkbox', { name: `Select ${BUDI}` }).check();
    await actions.getByRole('button', { name: 'Remove from group', exact: true }).click();
    await p.getByRole('group', { name: `Remove ${BUDI} from the group?` }).waitFor(WAIT);
    await p.getByRole('button', { name: 'Cancel', exact: true }).click();
    expect((await participants(groupId)).some((x) => x.phone === BUDI)).toBe(true);
    await actions.getByRole('button', { name: 'Remove from group', exact: true }).click();
    await p.getByRole('button', { name: 'Yes, remove', exact: true }).click();
    const removed = p.getByRole('status').filter({ hasText: 'Members removed' });
    await removed.waitFor(WAIT);
    expect(await removed.getByRole('row').filter({ hasText: BUDI }).textContent()).toContain('removed');
    await expect.poll(() => table.getByRole('rowheader', { name: BUDI }).count()).toBe(0);
    expect((await participants(groupId)).map((x) => x.phone).sort()).toEqual([ADMIN, ANA].sort());
    expect(await seriousViolations(p)).toEqual([]);
  });

  it('shows, copies and revokes the invite link; another device joins by it; a revoked one is refused', async () => {
    const p = await open('group invite link', `#/devices/${adminId}/groups/${groupId}`);
    const card = p.getByRole('region', { name: 'Invite link' });
    await card.getByRole('button', { name: 'Show invite link', exact: true }).click();
    const shown = card.getByLabel('Current invite link', { exact: true });
    await shown.waitFor(WAIT);
    const first = (await shown.textContent()) ?? '';
    expect(first).toBe((await gw.request('GET', `/groups/${groupId}/invite-link`)).body.data.invite_link);
    expect(first).toMatch(/^https:\/\/chat\.whatsapp\.com\/[\w-]{6,64}$/);
    const copied = await copiedText(p, async () => {
      await card.getByRole('button', { name: 'Copy invite link', exact: true }).click();
      await card.getByText('Copied', { exact: true }).waitFor(WAIT);
    });
    expect(copied).toBe(first);

    await card.getByRole('button', { name: 'Revoke link', exact: true }).click();
    await card.getByRole('button', { name: 'Yes, revoke', exact: true }).click();
    await card.getByRole('status').filter({ hasText: 'Invite link revoked' }).waitFor(WAIT);
    const second = (await shown.textContent()) ?? '';
    expect(second).not.toBe(first);
    expect(second).toBe((await gw.request('GET', `/groups/${groupId}/invite-link`)).body.data.invite_link);
    await pages.discard();

    // The other device's groups page: the old link is refused in the API's words, the new one joins.
    const q = await open('group join by link', `#/devices/${secondId}/groups`);
    await q.getByRole('heading', { name: 'Groups', exact: true }).waitFor(WAIT);
    await q.getByRole('button', { name: 'Join a group', exact: true }).click();
    const form = q.getByRole('form', { name: 'Join a group' });
    await form.getByLabel('Invite link or code').fill(first);
    await form.getByRole('button', { name: 'Join group', exact: true }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('Group not found');
    expect((await gw.request('GET', `/groups?device=${SECOND}`)).body.data).toEqual([]);
    await form.getByLabel('Invite link or code').fill(`  ${second}  `);
    await form.getByRole('button', { name: 'Join group', exact: true }).click();
    const joined = q.getByRole('status').filter({ hasText: 'Group joined' });
    await joined.waitFor(WAIT);
    expect(await q.getByRole('form', { name: 'Join a group' }).count()).toBe(0);
    const mine = (await gw.request('GET', `/groups?device=${SECOND}`)).body.data as Array<{ id: number }>;
    expect(mine).toHaveLength(1);
    expect(await joined.getByRole('link', { name: 'Board', exact: true }).getAttribute('href')).toBe(
      `#/devices/${secondId}/groups/${mine[0]!.id}`,
    );
    await q.getByRole('region', { name: 'Groups table' }).getByRole('link', { name: 'Board' }).waitFor(WAIT);
    await expect.poll(() => roleOf(SECOND)).toBeNull();
    expect(await seriousViolations(q)).toEqual([]);
  });

  it('a member’s page offers no admin actions; leaving asks first, then the group leaves the list', async () => {
    const mine = (await gw.request('GET', `/groups?device=${SECOND}`)).body.data as Array<{ id: number }>;
    const p = await open('group leave', `#/devices/${secondId}/groups/${mine[0]!.id}`);
    await p.getByRole('region', { name: 'Participants table' }).getByRole('rowheader', { name: SECOND }).waitFor(WAIT);
    await p.getByText('Only a group’s administrators can').waitFor(WAIT);
    expect(await p.getByRole('checkbox').count()).toBe(0);
    expect(await p.getByRole('region', { name: 'Invite link' }).count()).toBe(0);

    await p.getByRole('button', { name: 'Leave group', exact: true }).click();
    await p.getByRole('group', { name: 'Leave “Board”?' }).waitFor(WAIT);
    await p.keyboard.press('Escape');
    expect(await p.getByRole('button', { name: 'Leave group', exact: true }).count()).toBe(1);
    expect((await gw.request('GET', `/groups?device=${SECOND}`)).body.data).toHaveLength(1);

    await p.getByRole('button', { name: 'Leave group', exact: true }).click();
    await p.getByRole('button', { name: 'Yes, leave', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'Left the group: Board.' }).waitFor(WAIT);
    expect(p.url()).toMatch(new RegExp(`#/devices/${secondId}/groups$`));
    await p.getByText('This device is in no group yet').waitFor(WAIT);
    expect((await gw.request('GET', `/groups?device=${SECOND}`)).body.data).toEqual([]);
    expect((await gw.request('GET', `/groups/${mine[0]!.id}`)).status).toBe(404);
    await expect.poll(async () => (await participants(groupId)).some((x) => x.phone === SECOND)).toBe(false);
  });
});

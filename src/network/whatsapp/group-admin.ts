/**
 * Group administration through the open socket: removing, promoting and demoting members, the invite code,
 * joining by it and leaving (DECISIONS 16).
 *
 * Owns: deciding from the group's metadata which participants the network is asked about (a number not in the
 * group is NOT_A_MEMBER, the creator cannot be removed or demoted: FORBIDDEN, without a round trip), addressing
 * members as the group does (by LID in LID groups), and reading the network's per-participant statuses.
 * Must never: answer a participant as changed that the network did not change.
 */
import type { GroupMetadata } from 'baileys';
import type { ParticipantAction, ParticipantChangeOutcome } from '../group-admin.js';
import type { NetworkGroup, NetworkGroupId, PhoneNumber } from '../network.js';
import { NetworkNotFoundError } from '../network.js';
import { groupError, toNetworkGroup } from './groups.js';
import { phoneOf, senderPhone } from './numbers.js';
import type { SocketPort } from './socket-port.js';

/** A well-formed number: digits only, country code first (the gateway's own check, as the sandbox's). */
const isPhoneNumber = (value: string): boolean => /^[1-9][0-9]{6,14}$/.test(value);

/** A participant's status in the network's answer: 200 changed; 404 not in the group; 403/401 not allowed. */
function outcomeOf(phone: PhoneNumber, status: string | undefined): ParticipantChangeOutcome {
  if (status === '200') return { phone, ok: true };
  if (status === '404' || status === '406') return { phone, ok: false, code: 'NOT_A_MEMBER' };
  if (status === '400') return { phone, ok: false, code: 'INVALID_NUMBER' };
  return { phone, ok: false, code: 'FORBIDDEN' };
}

export async function changeParticipants(
  socket: SocketPort,
  metadata: GroupMetadata,
  phones: ReadonlyArray<PhoneNumber>,
  action: ParticipantAction,
): Promise<ParticipantChangeOutcome[]> {
  // Each member's address as the group names it, and whether they made the group.
  const members = new Map<PhoneNumber, { jid: string; creator: boolean }>();
  for (const p of metadata.participants) {
    const phone = senderPhone(p.id, p.phoneNumber);
    if (phone !== null) members.set(phone, { jid: p.id, creator: p.admin === 'superadmin' });
  }
  const decided = new Map<PhoneNumber, ParticipantChangeOutcome>();
  const asked: Array<{ phone: PhoneNumber; jid: string }> = [];
  for (const phone of phones) {
    const member = isPhoneNumber(phone) ? members.get(phone) : undefined;
    if (!isPhoneNumber(phone)) decided.set(phone, { phone, ok: false, code: 'INVALID_NUMBER' });
    else if (member === undefined) decided.set(phone, { phone, ok: false, code: 'NOT_A_MEMBER' });
    else if (member.creator && action !== 'promote') decided.set(phone, { phone, ok: false, code: 'FORBIDDEN' });
    else asked.push({ phone, jid: member.jid });
  }
  if (asked.length > 0) {
    const answers = await socket
      .groupParticipantsUpdate(
        metadata.id,
        asked.map((a) => a.jid),
        action,
      )
      .catch((error: unknown) => {
        throw groupError(error);
      });
    const byJid = new Map(answers.map((r) => [r.jid, r.status] as const));
    const byPhone = new Map(answers.map((r) => [phoneOf(r.jid), r.status] as const));
    for (const { phone, jid } of asked) decided.set(phone, outcomeOf(phone, byJid.get(jid) ?? byPhone.get(phone)));
  }
  return phones.map((phone) => decided.get(phone) as ParticipantChangeOutcome);
}

export async function groupInvite(socket: SocketPort, groupId: NetworkGroupId, revoke: boolean): Promise<string> {
  try {
    const code = revoke ? await socket.groupRevokeInvite(groupId) : await socket.groupInviteCode(groupId);
    if (code === undefined || code === '') throw new NetworkNotFoundError();
    return code;
  } catch (error) {
    throw groupError(error);
  }
}

export async function joinGroup(socket: SocketPort, code: string): Promise<NetworkGroup> {
  try {
    const jid = await socket.groupAcceptInvite(code);
    if (jid === undefined || jid === '') throw new NetworkNotFoundError();
    return toNetworkGroup(await socket.groupMetadata(jid));
  } catch (error) {
    // The network answers a code it does not know (or one revoked) with 406 or 410: no such invite.
    const status = Number((error as { data?: unknown } | null)?.data);
    if (status === 406 || status === 410) throw new NetworkNotFoundError();
    throw groupError(error);
  }
}

export async function leaveGroup(socket: SocketPort, groupId: NetworkGroupId): Promise<void> {
  try {
    await socket.groupLeave(groupId);
  } catch (error) {
    throw groupError(error);
  }
}

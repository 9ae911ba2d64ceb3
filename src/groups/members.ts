/**
 * Adding members to a group in bulk (spec 4.7, 2.6, 7.3, 8; docs/internals.md, Groups).
 *
 * Owns: the order of checks (participants 400 → group 404 → device 400 →
 * admin 403 → capacity 400 → limits 429), the per-participant outcomes, and
 * the two per-group limits, exact under concurrency and across restarts:
 *
 *   1. admit   (one transaction, under the group's row lock): count the
 *      admitted requests of the last minute and the day's additions, refuse
 *      (429) or record the request and RESERVE as much of the day's budget as
 *      the well-formed participants need (the rest fail RATE_LIMITED);
 *   2. ask the network to add the reserved participants (no lock held);
 *   3. settle  (one transaction, under the lock again): give back what was
 *      reserved and not added, and record the `group.participants_added`
 *      event. The group's new snapshot is stored through the device's sync
 *      order (sync.ts `refresh`), so concurrent requests cannot leave an
 *      older one behind.
 *
 * Reserving before the network call is what makes concurrent requests exact:
 * two requests can never both spend the same unit. A process that dies
 * between 1 and 3 leaves its reservation spent for that day: the limit can
 * be under-used, never exceeded.
 * Must never: hold a database transaction while waiting for the network, or
 * write SQL itself.
 */
import type { Clock } from '../clock.js';
import { iso } from '../clock.js';
import { devicesRepository } from '../devices/repository.js';
import { recordEvent } from '../events/record.js';
import { ApiError } from '../errors.js';
import { isPhoneNumber } from '../shapes.js';
import type { AddParticipantOutcome } from '../network/network.js';
import type { Store } from '../store/store.js';
import { MAX_PARTICIPANTS_PER_REQUEST, admit, utcDay, windowStart, type Admission } from './limits.js';
import type { AddedMember, FailedMember, MembersAddResult } from './present.js';
import { groupsRepository } from './repository.js';
import type { Acting, GroupRefresher, GroupsService } from './service.js';
import { failure } from './failures.js';

/** A failure the gateway decides itself, before or instead of the network. */
const DAILY_BUDGET_TEXT = 'Too many addition requests: the group’s daily limit of additions is reached';

export const MESSAGES = {
  all: 'Members added successfully',
  some: 'Some members added successfully',
} as const;

export interface MembersAddAnswer {
  readonly message: (typeof MESSAGES)[keyof typeof MESSAGES];
  readonly data: MembersAddResult;
}

export interface MembersServiceOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly groups: GroupsService;
  readonly sync: GroupRefresher;
}

export class MembersService {
  constructor(private readonly options: MembersServiceOptions) {}

  async add(accountId: number, groupId: number, body: unknown): Promise<MembersAddAnswer> {
    const participants = readParticipants(body);
    const acting = await this.options.groups.acting(accountId, groupId);
    const before = await this.options.groups.fetch(acting);
    const self = before.participants.find((p) => p.phone === acting.device.phone);
    if (self === undefined || self.role === null) {
      throw new ApiError('ACCESS_DENIED', { error: 'the device is not an administrator of the group' });
    }
    if (before.participants.length >= before.capacity) {
      throw new ApiError('GROUP_CAPACITY_EXCEEDED', {
        error: `the group has ${before.participants.length} members, its maximum`,
      });
    }

    const wellFormed = participants.filter(isPhoneNumber);
    const now = this.options.clock.now();
    const day = utcDay(now);
    const admission = await this.admit(acting.group.id, now, wellFormed.length);
    if (!admission.admitted) {
      throw new ApiError('TOO_MANY_REQUESTS', { headers: { 'retry-after': String(admission.retryAfterS) } });
    }
    const toNetwork = wellFormed.slice(0, admission.reserved);

    let outcomes: AddParticipantOutcome[] = [];
    if (toNetwork.length > 0) {
      try {
        outcomes = await acting.conn.addParticipants(acting.group.network_id, toNetwork);
      } catch (error) {
        await this.giveBack(acting.group.id, day, admission.reserved);
        return this.options.groups.refused(acting, error);
      }
    }
    const addedAt = iso(this.options.clock.now());
    const byPhone = new Map(outcomes.map((o) => [o.phone, o]));
    const sent = new Set(toNetwork);
    const added: AddedMember[] = [];
    const failed: FailedMember[] = [];
    for (const phone of participants) {
      const outcome = byPhone.get(phone);
      if (!isPhoneNumber(phone)) failed.push(failure(phone, 'INVALID_NUMBER'));
      else if (!sent.has(phone)) failed.push(failure(phone, 'RATE_LIMITED', DAILY_BUDGET_TEXT));
      else if (outcome === undefined)
        failed.push(failure(phone, 'RATE_LIMITED', 'The network gave no answer; try again'));
      else if (outcome.ok)
        added.push(
          outcome.name
            ? { phone, status: 'added', name: outcome.name, added_at: addedAt }
            : { phone, status: 'added', added_at: addedAt },
        );
      else failed.push(failure(phone, outcome.code));
    }

    // The group as the network shows it after the change, stored in the device's sync order; if the network
    // cannot be asked again right now, what this request knows (the next sync stores the truth).
    const after = await this.options.sync.refresh(acting.device.id, acting.group.network_id).catch(() => null);
    const data: MembersAddResult = {
      group_id: String(acting.group.id),
      group_name: after?.subject ?? before.subject,
      added_members: added,
      failed_members: failed,
      total_added: added.length,
      total_failed: failed.length,
      new_participant_count: after?.participant_count ?? before.participants.length + added.length,
    };
    await this.settle(acting, day, admission.reserved - added.length, data);
    return { message: failed.length === 0 ? MESSAGES.all : MESSAGES.some, data };
  }

  /** Step 1: the limits, decided and recorded under the group's lock. */
  private admit(groupId: number, now: number, wanted: number): Promise<Admission> {
    return this.options.store.db.transaction().execute(async (trx) => {
      const locked = await groupsRepository.lockForUpdate(trx, groupId);
      if (locked === undefined || locked.left_at !== null) throw new ApiError('GROUP_NOT_FOUND');
      const window = await groupsRepository.requestWindow(trx, groupId, windowStart(now));
      const day = utcDay(now);
      const usedToday = await groupsRepository.usedOn(trx, groupId, day);
      const admission = admit({
        now,
        requestsInWindow: window.count,
        oldestInWindow: window.oldest,
        usedToday,
        wanted,
      });
      if (admission.admitted) {
        await groupsRepository.recordRequest(trx, groupId, now);
        if (admission.reserved > 0) await groupsRepository.addUsed(trx, groupId, day, admission.reserved);
      }
      return admission;
    });
  }

  /** The network refused the whole request: nothing was added, the reservation goes back (the request still counts). */
  private async giveBack(groupId: number, day: number, units: number): Promise<void> {
    if (units <= 0) return;
    await this.options.store.db.transaction().execute(async (trx) => {
      await groupsRepository.lockForUpdate(trx, groupId);
      await groupsRepository.addUsed(trx, groupId, day, -units);
    });
  }

  /** Step 3: the unused reservation back, and the webhook event; one transaction. */
  private async settle(acting: Acting, day: number, unused: number, data: MembersAddResult): Promise<void> {
    if (unused <= 0 && data.total_added === 0) return;
    await this.options.store.db.transaction().execute(async (trx) => {
      await groupsRepository.lockForUpdate(trx, acting.group.id);
      if (unused > 0) await groupsRepository.addUsed(trx, acting.group.id, day, -unused);
      if (data.total_added === 0) return;
      const device = await devicesRepository.findById(trx, acting.device.id);
      if (device === undefined) return;
      await recordEvent(
        trx,
        device,
        'group.participants_added',
        {
          group_id: data.group_id,
          network_id: acting.group.network_id,
          group_name: data.group_name,
          added_members: data.added_members,
          total_added: data.total_added,
          new_participant_count: data.new_participant_count,
        },
        this.options.clock.now(),
      );
    });
  }
}

/**
 * `participants`: an array of 1 to 20 strings (spec 4.7). Anything else is
 * `400 Validation failed`; strings that are not well-formed numbers are not a
 * request error but a per-participant INVALID_NUMBER. Duplicates count once
 * (the first occurrence keeps its place).
 */
export function readParticipants(body: unknown): string[] {
  const value =
    body !== null && typeof body === 'object' ? (body as { participants?: unknown }).participants : undefined;
  const refuse = (errors: Record<string, string[]>) => new ApiError('VALIDATION_FAILED', { errors });
  if (!Array.isArray(value)) throw refuse({ participants: ['is required and must be an array of phone numbers'] });
  if (value.length === 0) throw refuse({ participants: ['at least one participant is required'] });
  if (value.length > MAX_PARTICIPANTS_PER_REQUEST) {
    throw refuse({ participants: [`at most ${MAX_PARTICIPANTS_PER_REQUEST} participants per request`] });
  }
  const wrong = value.flatMap((item, i) => (typeof item === 'string' ? [] : [i]));
  if (wrong.length > 0) throw refuse(Object.fromEntries(wrong.map((i) => [`participants.${i}`, ['must be a string']])));
  return [...new Set(value as string[])];
}

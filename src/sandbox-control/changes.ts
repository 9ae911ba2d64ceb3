/**
 * Phones changing messages in the sandbox, as the gateway lets an account drive them (issue 26): a phone reacts
 * to a message of the account's, or edits or deletes one it sent to one of the account's devices.
 *
 * Owns: naming the message as the network knows it (ours by our id; a phone's by the network's id the device heard
 * it under) and the ownership rules: only the account's own messages (404 `Message not found` otherwise, as for an
 * unknown id), edits and deletes only of the phone's own messages, reactions only where the phone is in the chat.
 * Must never: know about HTTP; pass another account's message or device to the sandbox.
 */
import { ApiError } from '../errors.js';
import { incomingIdsRepository } from '../messages/incoming-ids-repository.js';
import { messagesRepository, type MessageRow } from '../messages/repository.js';
import { PHONE_PATTERN } from '../phone-number.js';
import type { MessageChange } from '../network/network.js';
import type { PhoneVote, SandboxControl } from '../network/sandbox-control.js';
import { storedPoll, voteProblem } from '../messages/poll-votes-record.js';
import type { Store } from '../store/store.js';
import { sandboxControlRepository as repo } from './repository.js';

const NOT_ON_SANDBOX = 'this account is not a sandbox account: its devices are on the real network';

function groupOf(row: MessageRow): string | undefined {
  const group = (JSON.parse(row.params) as { group_id?: unknown }).group_id;
  return typeof group === 'string' ? group : undefined;
}

export class SandboxChanges {
  constructor(
    private readonly store: Store,
    private readonly sandbox: SandboxControl,
    private readonly isSandboxAccount: (accountId: number) => Promise<boolean>,
  ) {}

  /** `phone` makes `change` to the account's message `messageId`. */
  async change(accountId: number, phone: string, messageId: string, change: MessageChange | PhoneVote): Promise<void> {
    if (!PHONE_PATTERN.test(phone))
      throw new ApiError('INVALID_PHONE', { errors: { phone: ['digits only, country code first'] } });
    if (!(await this.isSandboxAccount(accountId))) throw new ApiError('MESSAGE_NOT_FOUND', { error: NOT_ON_SANDBOX });
    const db = this.store.db;
    const row = await messagesRepository.find(db, accountId, messageId);
    if (row === undefined) throw new ApiError('MESSAGE_NOT_FOUND');
    const device = (await repo.devicesOf(db, accountId)).find((d) => d.id === Number(row.device_id));
    if (device?.network_session === null || device?.network_session === undefined) {
      throw new ApiError('DEVICE_NOT_FOUND', { error: 'the message’s device is not paired' });
    }
    if (change.kind === 'vote') checkVote(row, change);
    const recipient = { session: device.network_session };
    const view = String(accountId);
    if (row.direction === 'outgoing') {
      // The network checks that the phone received it; only its author could edit or delete it.
      if (change.kind !== 'reaction' && change.kind !== 'vote') throw notTheirs(phone, 'sent by the device, not by');
      return this.sandbox.changeFromPhone(phone, { target: { id: row.id, fromMe: true }, ...change }, recipient, view);
    }
    const group = groupOf(row);
    const own = row.sender === phone;
    const anyMember = change.kind === 'reaction' || change.kind === 'vote';
    if (!own && (!anyMember || group === undefined)) {
      throw notTheirs(phone, anyMember ? 'in a chat without' : 'not sent by');
    }
    const networkId = await incomingIdsRepository.incomingNetworkId(db, device.id, row.id);
    if (networkId === undefined) throw new ApiError('MESSAGE_NOT_FOUND');
    return this.sandbox.changeFromPhone(
      phone,
      { target: { id: networkId, fromMe: false }, ...(group === undefined ? {} : { group }), ...change },
      recipient,
      view,
    );
  }
}

/** A vote names options of the poll, each once, no more than it allows: else 400 `Invalid vote` saying why. */
function checkVote(row: MessageRow, vote: PhoneVote): void {
  const poll = storedPoll(row);
  const problem = poll === null ? 'that message is not a poll' : voteProblem(poll, vote.selected);
  if (problem !== null) {
    throw new ApiError('SANDBOX_REJECTED', { error: problem }, { statusCode: 400, message: 'Invalid vote' });
  }
}

function notTheirs(phone: string, relation: string): ApiError {
  return new ApiError('MESSAGE_NOT_FOUND', { error: `that message is ${relation} ${phone}` });
}

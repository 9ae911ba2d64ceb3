/**
 * Votes WhatsApp phones cast on polls → the seam's `poll_vote` (issue 26; docs/whatsapp.md, Polls).
 *
 * A vote arrives in `messages.upsert` as a `pollUpdateMessage`: the key of the poll it is on (already in this
 * device's terms: `fromMe` when the device sent the poll) and the vote encrypted with a key derived from the poll's
 * secret and the ids of the poll, its creator and the voter. The library of this version no longer decrypts it (its
 * own attempt is commented out), so this does, with the secret kept when the poll was sent (poll-secrets.ts) or
 * received. The library's `decryptPollVote` answers the SHA-256 of each chosen option's text; they go to the
 * gateway as they are (`hashed`), which matches them against the poll's options (network/poll-options.ts).
 * Which form of the creator's and the voter's JIDs a phone used (number or LID) is not said on the wire, so each
 * known pairing is tried: AES-GCM tells a wrong one by its tag.
 * Must never: announce a vote it could not decrypt (logged at debug, dropped), or claim a poll is ours when its id
 * is not one the gateway gave.
 */
import {
  decryptPollVote,
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  jidNormalizedUser,
  normalizeMessageContent,
  type WAMessage,
} from 'baileys';
import type { ChangedMessage, NetworkEvent } from '../network.js';
import { fromNetworkId } from './ids.js';
import { senderInChat } from './lid.js';

export type PollVoted = Extract<NetworkEvent, { type: 'poll_vote' }>;

/** What a vote needs to be read: the poll's secret by the poll's network id (null when none is kept). */
export type SecretOf = (pollNetworkId: string) => Promise<Uint8Array | null>;

const distinct = (jids: ReadonlyArray<string | null | undefined>): string[] => [
  ...new Set(jids.filter((j): j is string => typeof j === 'string' && j !== '').map((j) => jidNormalizedUser(j))),
];

function timestampMs(message: WAMessage): number {
  const t = message.messageTimestamp;
  const seconds = typeof t === 'number' ? t : t === null || t === undefined ? NaN : Number(t.toString());
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now();
}

/** Whether the upserted message is a vote on a poll (then it is read here, never as an incoming message). */
export function isPollVote(message: WAMessage): boolean {
  return normalizeMessageContent(message.message)?.pollUpdateMessage != null;
}

/**
 * The seam's `poll_vote` for an upserted vote; a reason when it is left out. `me`: this device's own JIDs (its
 * number's and its LID's), the creator of its polls.
 */
export async function readPollVote(
  message: WAMessage,
  me: ReadonlyArray<string>,
  secretOf: SecretOf,
): Promise<PollVoted | string> {
  const key = message.key;
  const chat = key?.remoteJid ?? undefined;
  const update = normalizeMessageContent(message.message)?.pollUpdateMessage;
  if (key === null || key === undefined || chat === undefined || update === null || update === undefined)
    return 'not a vote';
  if (key.fromMe === true) return 'a vote of this device’s own phone';
  if (isJidStatusBroadcast(chat) || isJidNewsletter(chat)) return 'not in a chat';
  const pollKey = update.pollCreationMessageKey;
  const pollId = pollKey?.id;
  const vote = update.vote;
  if (typeof pollId !== 'string' || pollId === '' || !vote?.encPayload || !vote.encIv) return 'incomplete vote';
  const ours = pollKey?.fromMe === true;
  let target: ChangedMessage;
  if (ours) {
    const own = fromNetworkId(pollId);
    if (own === null) return 'not the gateway’s poll';
    target = { id: own, fromMe: true };
  } else target = { id: pollId, fromMe: false };
  const secret = await secretOf(pollId);
  if (secret === null) return 'no secret kept for the poll';
  const sender = senderInChat(chat, key);
  if (sender === null) return 'no voter';
  const voters = isJidGroup(chat)
    ? distinct([key.participant, key.participantAlt])
    : distinct([chat, key.remoteJidAlt, key.participant]);
  const creators = ours ? distinct(me) : distinct([pollKey?.participant, pollKey?.remoteJid]);
  for (const creator of creators) {
    for (const voter of voters) {
      let hashes: string[];
      try {
        const decrypted = decryptPollVote(
          { encPayload: vote.encPayload, encIv: vote.encIv },
          { pollCreatorJid: creator, pollMsgId: pollId, pollEncKey: secret, voterJid: voter },
        );
        hashes = (decrypted.selectedOptions ?? []).map((h) => Buffer.from(h).toString('hex'));
      } catch {
        continue;
      }
      const group = isJidGroup(chat) ? chat : undefined;
      return {
        type: 'poll_vote',
        target,
        ...sender,
        ...(group === undefined ? {} : { group }),
        selected: hashes,
        hashed: true,
        at: new Date(timestampMs(message)),
      };
    }
  }
  return 'the vote could not be decrypted';
}

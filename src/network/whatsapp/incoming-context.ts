/**
 * What an incoming WhatsApp message says about other messages and people: the message it replies to
 * (`contextInfo.stanzaId`) and the people it mentions (`contextInfo.mentionedJid`) (docs/whatsapp.md, Incoming kinds).
 *
 * Owns: reading both from the content's context, telling a quoted message this device sent (our id encoding,
 * ids.ts) from one someone else wrote, and naming mentioned LIDs by number where the library's mapping store or the
 * group's members know it.
 * Must never: fail or hold a message over a mention (a look-up that fails or takes too long leaves the LID form),
 * report a LID as a phone number, or keep anything of the quoted message's content.
 */
import type { GroupMetadata, proto } from 'baileys';
import type { Logger } from 'pino';
import type { IncomingQuote } from '../network.js';
import { GROUP_SENDER_WAIT_MS, numberOfMember } from './group-senders.js';
import { fromNetworkId } from './ids.js';
import { lidOf, type LidLookup } from './lid.js';
import { phoneOf } from './numbers.js';

/** Mentions passed on at most (a text can hold only so many). */
const MAX_MENTIONS = 256;

export interface IncomingContext {
  readonly quoted?: IncomingQuote;
  readonly mentions?: ReadonlyArray<string>;
}

/** The context of the message's content, whichever kind carries it. */
function contextInfoOf(content: proto.IMessage): proto.IContextInfo | null {
  for (const [key, value] of Object.entries(content)) {
    if (key === 'messageContextInfo' || value === null || typeof value !== 'object') continue;
    const info = (value as { contextInfo?: proto.IContextInfo | null }).contextInfo;
    if (info !== null && info !== undefined) return info;
  }
  return null;
}

/** A mentioned JID as the seam names people: a number, or a LID form; null for anything else. */
function mentioned(jid: unknown): string | null {
  if (typeof jid !== 'string') return null;
  return phoneOf(jid) ?? lidOf(jid);
}

/** The reply and mentions an (unwrapped) content carries; neither field when it has none. */
export function contextOf(content: proto.IMessage): IncomingContext {
  const info = contextInfoOf(content);
  if (info === null) return {};
  const stanzaId = typeof info.stanzaId === 'string' && info.stanzaId !== '' ? info.stanzaId : null;
  const sentId = fromNetworkId(stanzaId);
  const mentions = [
    ...new Set((info.mentionedJid ?? []).slice(0, MAX_MENTIONS).flatMap((jid) => mentioned(jid) ?? [])),
  ];
  return {
    ...(stanzaId === null ? {} : { quoted: { networkId: stanzaId, ...(sentId === null ? {} : { sentId }) } }),
    ...(mentions.length === 0 ? {} : { mentions }),
  };
}

/**
 * The mentions with each LID named by its number where known: the library's mapping store first, then (in a
 * group, through `metadataOf`, at most `waitMs`) the group's members. Anything unknown stays as it was.
 */
export async function resolveMentions(
  mentions: ReadonlyArray<string>,
  lookup: LidLookup | null,
  metadataOf: (() => Promise<Pick<GroupMetadata, 'participants'>>) | null,
  logger: Pick<Logger, 'warn'>,
  waitMs = GROUP_SENDER_WAIT_MS,
): Promise<string[]> {
  const named = await Promise.all(
    mentions.map(async (mention) => {
      if (lidOf(mention) !== mention || lookup === null) return mention;
      const pn = await lookup.getPNForLID(mention).catch((error: unknown) => {
        logger.warn({ err: error }, 'looking up the number behind a mentioned LID failed');
        return null;
      });
      return phoneOf(pn) ?? mention;
    }),
  );
  if (metadataOf === null || !named.some((mention) => lidOf(mention) === mention)) return named;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), waitMs);
    timer.unref();
  });
  try {
    const metadata = await Promise.race([metadataOf(), late]);
    if (metadata === null) return named;
    return named.map((mention) =>
      lidOf(mention) === mention ? (numberOfMember(metadata, mention) ?? mention) : mention,
    );
  } catch (error) {
    logger.warn({ err: error }, "reading a group's metadata for mentioned LIDs failed");
    return named;
  } finally {
    clearTimeout(timer);
  }
}

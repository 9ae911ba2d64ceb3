/**
 * A group message whose sender the library knows by LID alone → the number its group's metadata gives (docs/whatsapp.md,
 * Senders known by LID).
 *
 * A phone may post in a group the moment the group appears, before the gateway has read the group's metadata (where
 * each member's number stands beside its LID) and taught those numbers to the library (group-receipts.ts). So when a
 * group message still names its sender by LID after the library's mapping was asked, the group's metadata is read
 * (from the connection's cache, fetched once when missing) and the member looked up in it.
 *
 * Owns: that look-up, bounded in time. Must never: hold an incoming message longer than `waitMs` for it, drop or fail
 * a message because the metadata could not be read (it goes on under its LID), or report a LID as a phone number.
 */
import { isLidUser, isPnUser, type GroupMetadata } from 'baileys';
import type { Logger } from 'pino';
import type { NetworkEvent } from '../network.js';
import { phoneOf } from './numbers.js';

type Incoming = Extract<NetworkEvent, { type: 'incoming_message' }>;

/** How long an incoming group message may wait for its group's metadata. */
export const GROUP_SENDER_WAIT_MS = 5_000;

/** The member's number in the group's metadata: `phoneNumber` beside its LID `id`, or the `id` beside its `lid`. */
export function numberOfMember(metadata: Pick<GroupMetadata, 'participants'>, lid: string): string | null {
  for (const p of metadata.participants) {
    if (p.id === lid && typeof p.phoneNumber === 'string' && isPnUser(p.phoneNumber)) return phoneOf(p.phoneNumber);
    if (p.lid === lid && isPnUser(p.id) && isLidUser(p.lid)) return phoneOf(p.id);
  }
  return null;
}

/**
 * The event with its sender's number from the group's metadata, when it is a group message still named by LID and
 * the metadata (read through `metadataOf`, at most `waitMs`) names the member; the event unchanged otherwise.
 */
export async function resolveGroupSender<T extends Pick<Incoming, 'from' | 'fromLid' | 'group'>>(
  event: T,
  metadataOf: (group: string) => Promise<GroupMetadata>,
  logger: Pick<Logger, 'warn'>,
  waitMs = GROUP_SENDER_WAIT_MS,
): Promise<T> {
  const { group, fromLid } = event;
  if (group === undefined || fromLid === undefined || event.from !== fromLid) return event;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), waitMs);
    timer.unref();
  });
  try {
    const metadata = await Promise.race([metadataOf(group), late]);
    const phone = metadata === null ? null : numberOfMember(metadata, fromLid);
    return phone === null ? event : { ...event, from: phone };
  } catch (error) {
    logger.warn({ err: error }, "reading a group's metadata for a sender known by LID failed");
    return event;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The server making a phone's number known for its LID, as WhatsApp does with its "linked profiles" notification: a
 * `mex` notification whose `update` (op `NotificationLinkedProfilesUpdates`) carries the LID and the number added
 * to it, in the JSON shape the pinned library reads (`Socket/messages-recv.js`), which announces the pair as
 * `lid-mapping.update` and stores it.
 *
 * Owns: building that notification for one account. Must never: reveal anything but the account's own pair.
 */
import { randomInt } from 'node:crypto';
import type { BinaryNode } from 'baileys';
import { now } from './pairing.js';
import type { Account } from './world.js';

export function linkedProfilesNotification(account: Account): BinaryNode {
  const payload = {
    data: {
      xwa2_notify_linked_profiles: {
        jid: `${account.lid}@lid`,
        added_profiles: [{ pn: `${account.phone}@s.whatsapp.net` }],
      },
    },
  };
  return {
    tag: 'notification',
    attrs: { from: 's.whatsapp.net', type: 'mex', id: `standin-mex-${randomInt(10 ** 9)}`, t: now() },
    content: [
      {
        tag: 'update',
        attrs: { op_name: 'NotificationLinkedProfilesUpdates' },
        content: Buffer.from(JSON.stringify(payload)),
      },
    ],
  };
}

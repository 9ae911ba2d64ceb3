/**
 * Which chat a message is in (DECISIONS 16): the one rule, used when a message row is written (its `chat` column),
 * when the chat list is kept (maintain.ts) and when an action names a message's chat (messages/actions-rules.ts).
 *
 * Owns: that rule: a group message is in its group (the network's id, `…@g.us`: ours name it as `receiver`, a
 * received one among its params as `group_id`); any other is in the chat with the other person (the receiver of
 * ours, the sender of one received). Queue rows of message actions are in no chat.
 * Must never: import anything but types, or do I/O.
 */

/** The columns of a message row the rule reads. */
export interface ChatKeyFields {
  readonly direction: string;
  readonly receiver: string;
  readonly sender: string | null;
  readonly device_phone: string;
  /** JSON. */
  readonly params: string;
}

/** A group's network id, as the network names groups. */
export const isGroupChat = (chat: string): boolean => chat.endsWith('@g.us');

/** The chat of a received message: its group, else its sender. */
export function receivedChat(row: ChatKeyFields): string {
  // Most messages carry no group: the params are parsed only when they may name one.
  if (row.params.includes('"group_id"')) {
    const group = (JSON.parse(row.params) as Record<string, unknown>).group_id;
    if (typeof group === 'string') return group;
  }
  return row.sender ?? row.device_phone;
}

/** The chat a message is in; null for the queue row of an action (and anything but a message). */
export function chatKey(row: ChatKeyFields): string | null {
  if (row.direction === 'outgoing') return row.receiver;
  if (row.direction === 'incoming') return receivedChat(row);
  return null;
}

/**
 * Pieces the chats list and a chat's page share: a chat route's path (the device in the query), a message in one
 * line, and a chat's marks.
 */
import type { Chat, Message } from '../api';

/** The path of a chat route: `/chats`, or `/chats/{chat}/…`, with the device in the query. */
export function chatPath(devicePhone: string, chat?: string, rest = '', query: Record<string, string> = {}): string {
  const params = new URLSearchParams({ device: devicePhone, ...query });
  const path = chat === undefined ? '/chats' : `/chats/${encodeURIComponent(chat)}${rest}`;
  return `${path}?${params.toString()}`;
}

/** A message in one short line: its text, or what kind it is. */
export function preview(m: Message | null): string {
  if (m === null) return 'no messages';
  if (m.deleted_at !== undefined) return 'deleted';
  const text = m.poll?.name ?? m.message ?? '';
  const kind = m.type === 'chat' ? '' : `[${m.type}] `;
  const line = `${m.direction === 'outgoing' ? 'You: ' : ''}${kind}${text}`;
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

export function ChatMarks({ chat }: { chat: Chat }) {
  const marks = [
    chat.pinned ? 'pinned' : null,
    chat.archived ? 'archived' : null,
    chat.muted_until !== null && Date.parse(chat.muted_until) > Date.now() ? 'muted' : null,
  ].filter((m): m is string => m !== null);
  if (marks.length === 0) return null;
  return (
    <ul class="marks" aria-label="Marks">
      {marks.map((m) => (
        <li key={m} class={`badge badge-${m}`}>
          {m}
        </li>
      ))}
    </ul>
  );
}

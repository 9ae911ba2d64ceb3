/**
 * A device's chats (`GET /chats`, docs/api.md, Chats): most recent first, each with its last message, unread
 * count and marks (pinned, archived, muted), archived or unarchived from the list; one chat's history is
 * chat-view.tsx.
 *
 * Owns: the list and its archive buttons. Must never: change a chat the API did not answer as changed (the list is
 * read again after each change).
 */
import { useState } from 'preact/hooks';
import { call, type Chat, type Device } from '../api';
import { usePolling } from '../hooks';
import { DataTable, ErrorNotice, Notice, Time } from '../ui';
import { ChatView } from './chat-view';
import { ChatMarks, chatPath, preview } from './chat-parts';

const PAGE = 50;

export function ChatsView({ device, chat }: { device: Device; chat: string | undefined }) {
  if (device.phone === null) {
    return (
      <section class="card wide">
        <h2>Chats</h2>
        <p>Pair the device first: chats come from its messages.</p>
      </section>
    );
  }
  if (chat !== undefined) return <ChatView device={device} devicePhone={device.phone} chat={chat} />;
  return <ChatList device={device} devicePhone={device.phone} />;
}

function ChatList({ device, devicePhone }: { device: Device; devicePhone: string }) {
  const [chats, setChats] = useState<Chat[] | null>(null);
  const [older, setOlder] = useState<Chat[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const load = async () => {
    try {
      const answer = await call<Chat[]>('GET', chatPath(devicePhone, undefined, '', { limit: String(PAGE) }));
      setChats(answer.data);
      if (older.length === 0) setCursor(answer.next_cursor ?? null);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 3000, [devicePhone, older.length]);
  const first = new Set((chats ?? []).map((c) => c.id));
  const rows = [...(chats ?? []), ...older.filter((c) => !first.has(c.id))];

  const archive = async (chat: Chat, archived: boolean) => {
    setError(null);
    setNotice('');
    try {
      const answer = await call<Chat>('PATCH', `/chats/${encodeURIComponent(chat.id)}`, {
        device: devicePhone,
        archived,
      });
      setNotice(`${answer.message}: ${chat.name ?? chat.id} ${archived ? 'archived' : 'unarchived'}.`);
      setOlder([]);
      await load();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section class="card wide" aria-labelledby="chats-title">
      <h2 id="chats-title">Chats</h2>
      <ErrorNotice error={error} />
      {notice !== '' && <Notice>{notice}</Notice>}
      {chats === null ? (
        <p aria-busy="true">Loading chats…</p>
      ) : rows.length === 0 ? (
        <p>No chats yet: they appear once this device sends or receives a message.</p>
      ) : (
        <DataTable
          label="Chats table"
          hiddenCaption="Chats, most recent first"
          columns={['Chat', 'Last message', 'Unread', 'Marks', 'Actions']}
        >
          {rows.map((c) => (
            <tr key={c.id}>
              <th scope="row">
                <a href={`#/devices/${device.id}/chats/${encodeURIComponent(c.id)}`}>{c.name ?? c.id}</a>
                {c.name !== null && c.name !== c.id && (
                  <>
                    <br />
                    <small class="muted">{c.id}</small>
                  </>
                )}
              </th>
              <td>
                {preview(c.last_message)}
                {c.last_message !== null && (
                  <>
                    <br />
                    <small>
                      <Time value={c.last_message.timestamp} />
                    </small>
                  </>
                )}
              </td>
              <td>
                {c.unread_count > 0 ? (
                  <span class="badge badge-unread" aria-label={`${c.unread_count} unread`}>
                    {c.unread_count}
                  </span>
                ) : (
                  <span class="muted">0</span>
                )}
              </td>
              <td>
                <ChatMarks chat={c} />
              </td>
              <td>
                <button
                  type="button"
                  aria-label={`${c.archived ? 'Unarchive' : 'Archive'} ${c.name ?? c.id}`}
                  onClick={() => void archive(c, !c.archived)}
                >
                  {c.archived ? 'Unarchive' : 'Archive'}
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {cursor !== null && (
        <button
          type="button"
          onClick={async () => {
            try {
              const answer = await call<Chat[]>(
                'GET',
                chatPath(devicePhone, undefined, '', { limit: String(PAGE), cursor }),
              );
              setOlder([...older, ...answer.data]);
              setCursor(answer.next_cursor ?? null);
            } catch (failure) {
              setError(failure);
            }
          }}
        >
          Load more chats
        </button>
      )}
    </section>
  );
}

/**
 * One chat of a device: its messages in both directions, newest first (`GET /chats/{chat}/messages`, older ones
 * by cursor), marking the whole chat read, archiving or unarchiving it, and the contact's card for a phone's chat.
 *
 * Owns: the chat's page. Must never: mark a message read the API did not (the history is read again after it).
 */
import { useState } from 'preact/hooks';
import { call, type Chat, type Device, type Message } from '../api';
import { usePolling } from '../hooks';
import { ErrorNotice, Notice, StatusBadge, Time } from '../ui';
import { ChatMarks, chatPath } from './chat-parts';
import { MessageContent } from './message-content';

const PAGE = 30;

export function ChatView({ device, devicePhone, chat }: { device: Device; devicePhone: string; chat: string }) {
  const [info, setInfo] = useState<Chat | null>(null);
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [older, setOlder] = useState<Message[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);

  const load = async () => {
    try {
      const [history, list] = await Promise.all([
        call<Message[]>('GET', chatPath(devicePhone, chat, '/messages', { limit: String(PAGE) })),
        call<Chat[]>('GET', chatPath(devicePhone, undefined, '', { limit: '100' })),
      ]);
      setMessages(history.data);
      if (older.length === 0) setCursor(history.next_cursor ?? null);
      setInfo(list.data.find((c) => c.id === chat) ?? null);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 3000, [devicePhone, chat, older.length]);

  const act = async (work: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    setNotice('');
    try {
      setNotice(await work());
      setOlder([]);
      await load();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const path = `/chats/${encodeURIComponent(chat)}`;
  const title = info?.name ?? chat;
  const isUser = info !== null ? info.type === 'user' : /^\d+$/.test(chat) && chat.length > 6;
  const seen = new Set((messages ?? []).map((m) => m.id));
  const rows = [...(messages ?? []), ...older.filter((m) => !seen.has(m.id))];

  return (
    <section class="card wide" aria-labelledby="chat-title">
      <p class="crumbs">
        <a href={`#/devices/${device.id}/chats`}>All chats of {device.name}</a>
      </p>
      <div class="title-row">
        <h2 id="chat-title">{title}</h2>
        {info !== null && <ChatMarks chat={info} />}
        {info !== null && <span class="hint">{info.unread_count} unread</span>}
      </div>
      <div class="buttons">
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            void act(async () => (await call('POST', `${path}/read`, { device: devicePhone })).message + '.')
          }
        >
          Mark chat read
        </button>
        <button
          type="button"
          disabled={busy || info === null}
          onClick={() =>
            void act(async () => {
              const archived = !(info?.archived ?? false);
              const answer = await call('PATCH', path, { device: devicePhone, archived });
              return `${answer.message}: ${archived ? 'archived' : 'unarchived'}.`;
            })
          }
        >
          {info?.archived === true ? 'Unarchive chat' : 'Archive chat'}
        </button>
        {isUser && <a href={`#/devices/${device.id}/contacts/${encodeURIComponent(chat)}`}>Contact card</a>}
      </div>
      {notice !== '' && <Notice>{notice}</Notice>}
      <ErrorNotice error={error} />
      {messages === null ? (
        <p aria-busy="true">Loading messages…</p>
      ) : rows.length === 0 ? (
        <p>No messages in this chat.</p>
      ) : (
        <ol class="chat-history" aria-label="Messages, newest first">
          {rows.map((m) => (
            <li key={m.id} class={`bubble ${m.direction}`}>
              <p class="meta">
                {m.direction === 'incoming' ? (
                  <>
                    From{' '}
                    {m.sender !== null ? (
                      <a href={`#/devices/${device.id}/contacts/${encodeURIComponent(m.sender)}`}>{m.sender}</a>
                    ) : (
                      'unknown'
                    )}
                  </>
                ) : (
                  'You'
                )}{' '}
                · <Time value={m.timestamp} /> ·{' '}
                <StatusBadge
                  value={
                    m.direction === 'incoming' && m.read_at === null ? 'unread' : m.read_at !== null ? 'read' : m.status
                  }
                />
              </p>
              <MessageContent message={m} />
            </li>
          ))}
        </ol>
      )}
      {cursor !== null && (
        <button
          type="button"
          onClick={async () => {
            try {
              const answer = await call<Message[]>(
                'GET',
                chatPath(devicePhone, chat, '/messages', { limit: String(PAGE), cursor }),
              );
              setOlder([...older, ...answer.data]);
              setCursor(answer.next_cursor ?? null);
            } catch (failure) {
              setError(failure);
            }
          }}
        >
          Load older messages
        </button>
      )}
    </section>
  );
}

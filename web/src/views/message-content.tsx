/**
 * What a message says, as the messages page shows it (DECISIONS 15): its text (the new one once edited, marked
 * “edited”), a mark when its author deleted it for everyone (the content is kept and still shown), its media, the
 * reactions phones show on it, and a poll's tally.
 *
 * Owns: the content cell's parts. Must never: call the API (the actions are message-actions.tsx's).
 */
import type { Message, Poll } from '../api';
import { Time } from '../ui';
import { MessageMediaView } from './message-media';

export function MessageContent({ message: m }: { message: Message }) {
  const text = m.poll !== undefined ? null : (m.message ?? (m.media === undefined ? m.file_url : null));
  return (
    <div class={m.deleted_at === undefined ? 'content' : 'content deleted'}>
      {m.deleted_at !== undefined && (
        <p class="mark">
          Deleted for everyone <Time value={m.deleted_at} />
        </p>
      )}
      {text !== null && text !== '' && <p class="body">{text}</p>}
      {m.edited_at !== undefined && (
        <p class="mark">
          Edited <Time value={m.edited_at} />
        </p>
      )}
      <MessageMediaView message={m} />
      {m.poll !== undefined && <PollTally poll={m.poll} />}
      {m.reactions !== undefined && m.reactions.length > 0 && (
        <ul class="reactions" aria-label="Reactions">
          {m.reactions.map((r) => (
            <li key={r.from} title={`${r.emoji} from ${r.from}`}>
              {r.emoji} <span class="sr-only">from</span> {r.from}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function PollTally({ poll }: { poll: Poll }) {
  const total = poll.tally.reduce((sum, t) => sum + t.count, 0);
  return (
    <figure class="poll">
      <figcaption>
        Poll: {poll.name}{' '}
        <span class="muted">
          ({poll.selectable_count === 1 ? 'one choice' : `up to ${poll.selectable_count} choices`}, {total}{' '}
          {total === 1 ? 'vote' : 'votes'})
        </span>
      </figcaption>
      <ul class="tally" aria-label={`Votes on ${poll.name}`}>
        {poll.tally.map((t) => (
          <li key={t.option}>
            <span class="option">{t.option}</span>: {t.count} {t.count === 1 ? 'vote' : 'votes'}
            {t.voters.length > 0 && <span class="muted"> ({t.voters.join(', ')})</span>}
          </li>
        ))}
      </ul>
    </figure>
  );
}

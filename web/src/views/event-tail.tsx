/**
 * A device's events as they happen (its overview page): the gateway's event stream for this device, newest first,
 * the last EVENTS_KEPT of them, with a pause; a dropped stream is resumed after the last event shown, so none is
 * missed or shown twice.
 *
 * Owns: what the tail shows and when it reconnects. Must never: open the stream with the token in its URL
 * (event-stream.ts sends it in a header).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, type LoggedEvent } from '../api';
import { readEventStream } from '../event-stream';
import { describeError, Time } from '../ui';

/** How many events the tail keeps on screen. */
export const EVENTS_KEPT = 50;
/** Wait before opening a dropped stream again. */
const RECONNECT_MS = 2000;

type State = { kind: 'connecting' } | { kind: 'live' } | { kind: 'paused' } | { kind: 'retrying'; why: string };

export function EventTail({ deviceId }: { deviceId: number }) {
  const [events, setEvents] = useState<LoggedEvent[]>([]);
  const [paused, setPaused] = useState(false);
  const [state, setState] = useState<State>({ kind: 'connecting' });
  // The last cursor shown: the stream resumes after it (a pause too: nothing is lost while paused).
  const last = useRef<string | null>(null);

  useEffect(() => {
    if (paused) {
      setState({ kind: 'paused' });
      return;
    }
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const open = () => {
      setState({ kind: 'connecting' });
      readEventStream({
        device: deviceId,
        after: last.current,
        signal: abort.signal,
        onOpen: () => setState({ kind: 'live' }),
        onEvent: (event) => {
          last.current = event.cursor;
          setEvents((shown) => [event, ...shown].slice(0, EVENTS_KEPT));
        },
      }).then(
        () => retry('the stream ended'),
        (failure: unknown) => {
          if (abort.signal.aborted) return;
          // A refused token signs the page out (api.ts); another refusal is shown, and tried again.
          if (failure instanceof ApiFailure && failure.status === 401) return;
          retry(describeError(failure));
        },
      );
    };
    const retry = (why: string) => {
      if (abort.signal.aborted) return;
      setState({ kind: 'retrying', why });
      timer = setTimeout(open, RECONNECT_MS);
    };
    open();
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [deviceId, paused]);

  return (
    <section class="card wide" aria-labelledby="tail-title">
      <div class="title-row">
        <h2 id="tail-title">Live events</h2>
        <span role="status" class="hint">
          {state.kind === 'live'
            ? 'Live'
            : state.kind === 'paused'
              ? 'Paused'
              : state.kind === 'connecting'
                ? 'Connecting…'
                : `Reconnecting: ${state.why}`}
        </span>
        <button type="button" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
      </div>
      <p class="hint">
        This device’s events as the gateway records them (the last {EVENTS_KEPT}, newest first), the same ones its
        webhooks receive.
      </p>
      {events.length === 0 ? (
        <p>No events yet.</p>
      ) : (
        <ol class="event-tail" aria-label="Events, newest first">
          {events.map((e) => (
            <li key={e.cursor}>
              <Time value={e.created_at} /> <strong>{e.type}</strong> <span class="muted">{summary(e)}</span>
              <details>
                <summary>Body</summary>
                <pre>{JSON.stringify(e.data, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** One line about an event: a message's peer and text, or the first fields of its data. */
function summary(event: LoggedEvent): string {
  const data = (event.data ?? {}) as Record<string, unknown>;
  if (typeof data.direction === 'string') {
    const peer = data.direction === 'incoming' ? data.sender : data.receiver;
    const text = typeof data.message === 'string' ? `: ${data.message}` : '';
    return `${data.direction === 'incoming' ? 'from' : 'to'} ${String(peer)}${text}`.slice(0, 160);
  }
  return JSON.stringify(data).slice(0, 160);
}

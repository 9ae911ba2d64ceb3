/**
 * Reading the gateway's Server-Sent Events stream (`GET /events/stream`, docs/events.md) with `fetch` and a stream
 * reader: `EventSource` cannot send the Authorization header, and a token is never put in a URL.
 *
 * Owns: the request (the bearer token in its header, `Last-Event-ID` to resume after a cursor) and parsing the
 * `text/event-stream` body into events. Must never: put the token in the URL, or drop an event it parsed.
 */
import { EventStreamParser } from '../../src/events/sse-parse';
import { ApiFailure, storedToken, tokenRefused, type LoggedEvent } from './api';

export interface StreamOptions {
  /** `device=` of the stream: the device's id. */
  readonly device?: number;
  /** Resume after this cursor (sent as `Last-Event-ID`). */
  readonly after?: string | null;
  readonly signal: AbortSignal;
  /** The stream answered 200: events follow. */
  readonly onOpen?: () => void;
  readonly onEvent: (event: LoggedEvent) => void;
}

/** Reads the stream until it ends (resolves) or fails (rejects: `ApiFailure` for an error answer). */
export async function readEventStream(options: StreamOptions): Promise<void> {
  const token = storedToken();
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.after != null) headers['last-event-id'] = options.after;
  const query = options.device === undefined ? '' : `?device=${encodeURIComponent(String(options.device))}`;
  const response = await fetch(`/events/stream${query}`, { headers, signal: options.signal, cache: 'no-store' });
  if (!response.ok || response.body === null) {
    let envelope: { message?: string; error?: string } = {};
    try {
      envelope = (await response.json()) as typeof envelope;
    } catch {
      // not JSON
    }
    if (response.status === 401) tokenRefused(token);
    throw new ApiFailure(response.status, envelope.message ?? `HTTP ${response.status}`, envelope.error);
  }
  options.onOpen?.();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new EventStreamParser((id, data) => {
    try {
      const body = JSON.parse(data) as Omit<LoggedEvent, 'cursor'>;
      options.onEvent({ ...body, cursor: id });
    } catch {
      // a line that is not an event body (the spec allows other fields): nothing to show
    }
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    parser.push(value);
  }
}

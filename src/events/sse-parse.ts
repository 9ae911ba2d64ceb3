/**
 * Parsing a Server-Sent Events body (`text/event-stream`), chunk by chunk: the dashboard's live event tail reads
 * `GET /events/stream` with it (web/src/event-stream.ts). No imports: the browser bundle takes it as it is.
 *
 * Owns: the format's lines and events. Must never: drop or merge an event, or dispatch one before its empty line.
 */
/**
 * The `text/event-stream` format (HTML Living Standard, 9.2.6): lines `field: value`, an empty line ends an event,
 * `:` starts a comment (the server's keep-alive). Only events with data are dispatched.
 */
export class EventStreamParser {
  private buffer = '';
  private id = '';
  private data: string[] = [];

  constructor(private readonly dispatch: (id: string, data: string) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      // A `\r` last may be the first half of `\r\n`: wait for the next chunk.
      if (end < 0 || (end === this.buffer.length - 1 && this.buffer.endsWith('\r'))) return;
      const line = this.buffer.slice(0, end);
      const width = this.buffer.startsWith('\r\n', end) ? 2 : 1;
      this.buffer = this.buffer.slice(end + width);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.dispatch(this.id, this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }
}

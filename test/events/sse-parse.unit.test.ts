// The Server-Sent Events parser the dashboard reads the event stream with (src/events/sse-parse.ts): the
// `text/event-stream` format as the gateway's SSE route writes it, cut into chunks anywhere (a browser's stream
// reader hands over whatever arrived).
import { describe, expect, it } from 'vitest';
import { EventStreamParser } from '../../src/events/sse-parse.js';

function parse(chunks: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const parser = new EventStreamParser((id, data) => out.push([id, data]));
  for (const chunk of chunks) parser.push(chunk);
  return out;
}

const STREAM =
  ': keep-alive\n\nid: 0001\nevent: message.sent\ndata: {"type":"message.sent"}\n\n' +
  'id:0002\r\nevent: device.connected\r\ndata: {"a":1,\r\ndata: "b":2}\r\n\r\n';

describe('EventStreamParser', () => {
  it('dispatches each event with its id and data, skipping comments; multi-line data joined by \\n', () => {
    expect(parse([STREAM])).toEqual([
      ['0001', '{"type":"message.sent"}'],
      ['0002', '{"a":1,\n"b":2}'],
    ]);
  });

  it('gives the same events whatever the chunks, also a \\r\\n cut in half', () => {
    const whole = parse([STREAM]);
    for (let cut = 1; cut < STREAM.length; cut++) {
      expect(parse([STREAM.slice(0, cut), STREAM.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    }
    expect(parse([...STREAM])).toEqual(whole);
  });

  it('waits for the empty line: an event not yet ended is not dispatched', () => {
    expect(parse(['id: 7\ndata: {}\n'])).toEqual([]);
  });

  it('keeps the last id for an event without one, and ignores unknown fields', () => {
    expect(parse(['id: 5\ndata: x\n\nretry: 10\ndata: y\n\n'])).toEqual([
      ['5', 'x'],
      ['5', 'y'],
    ]);
  });
});

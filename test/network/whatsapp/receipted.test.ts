// docs/whatsapp.md, Nothing received is lost: Baileys sends the delivery receipt before it hands a message over, so
// every message it handed over (or holds in its event buffer) must reach the gateway, even when the connection
// closes, drops or restarts while the message still waits behind a store lookup. Over the scripted fake socket.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { noStoreAvailable } from '../../helpers/gateway.js';
import { SLOW, WhatsAppHarness, textFrom } from './harness.js';

const FRIEND = '4917600000002';
const COUNT = 50;
const ids = (n: number) => Array.from({ length: n }, (_, i) => `R${i}`);

describe.skipIf(noStoreAvailable)('incoming messages the network receipted are never lost', () => {
  let h: WhatsAppHarness;
  beforeEach(async () => {
    h = await WhatsAppHarness.open();
  });
  afterEach(() => h.close());

  it('a drop while messages wait behind a store lookup: all are passed on, before the drop', async () => {
    const { recorder, socket } = await h.pair();
    for (const id of ids(COUNT)) textFrom(socket, id, FRIEND, `hello ${id}`);
    socket.close(408, 'Connection was lost');
    await recorder.wait('disconnected', undefined, 0, SLOW);
    expect(recorder.of('incoming_message').map((e) => e.id)).toEqual(ids(COUNT));
    // The final event comes last: the gateway hears the messages while the connection is still its own.
    expect(recorder.types().at(-1)).toBe('disconnected');
  });

  it('close() (the gateway letting go) still passes on what was handed over; settled() waits for it', async () => {
    const { connection, recorder, socket } = await h.pair();
    for (const id of ids(COUNT)) textFrom(socket, id, FRIEND, `hello ${id}`);
    connection.close();
    await connection.settled?.();
    expect(recorder.of('incoming_message').map((e) => e.id)).toEqual(ids(COUNT));
  });

  it("messages held in the library's event buffer are flushed before the socket ends (drop and restart)", async () => {
    const { recorder, socket } = await h.pair();
    // A reconnect backlog: Baileys buffers the offline messages until the server says the backlog is done.
    socket.ev.buffer();
    for (const id of ids(5)) textFrom(socket, id, FRIEND, `buffered ${id}`);
    // The network asks for a restart: the socket is replaced (the next one may open a moment later: pre-keys.ts).
    const made = h.wa.sockets.length;
    socket.close(515, 'Stream Errored (restart required)');
    const next = await h.wa.socket(made);
    expect(next).not.toBe(socket);
    await recorder.wait('incoming_message', undefined, 4, SLOW);
    expect(recorder.of('incoming_message').map((e) => e.id)).toEqual(ids(5));
    next.ev.buffer();
    for (const id of ['B1', 'B2']) textFrom(next, id, FRIEND, `buffered ${id}`);
    next.close(408, 'Connection was lost');
    await recorder.wait('disconnected', undefined, 0, SLOW);
    expect(recorder.of('incoming_message').map((e) => e.id)).toEqual([...ids(5), 'B1', 'B2']);
  });

  it('close() flushes the buffer too', async () => {
    const { connection, recorder, socket } = await h.pair();
    socket.ev.buffer();
    textFrom(socket, 'C1', FRIEND, 'buffered at close');
    connection.close();
    await connection.settled?.();
    expect(recorder.of('incoming_message').map((e) => e.id)).toEqual(['C1']);
  });
});

// Issue 24, hardening: the Signal library prints whole session records (keys included) with console.info when it
// closes or opens a session. While a WhatsApp network runs, such lines go to the gateway's logger at debug level,
// as the library's words only (no objects), rate-limited; everyone else's console output is untouched.
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { captureLibraryConsole } from '../../../src/network/whatsapp/library-console.js';

const require = createRequire(import.meta.url);
const { SessionRecord } = require('libsignal') as {
  SessionRecord: new () => { closeSession(session: object): void; openSession(session: object): void };
};

function collectingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

describe('the WhatsApp libraries on the console', () => {
  const saved = { info: console.info, warn: console.warn };
  afterEach(() => {
    console.info = saved.info;
    console.warn = saved.warn;
  });

  it('a closed Signal session goes to the debug log without its keys; other callers are untouched', async () => {
    const printed = vi.fn();
    console.info = printed;
    const { logger, lines } = collectingLogger();
    const release = captureLibraryConsole(logger);
    try {
      new SessionRecord().closeSession({ indexInfo: { closed: -1 }, rootKey: 'SECRET-ROOT-KEY-MATERIAL' });
      console.info('the gateway itself');
    } finally {
      release();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(printed.mock.calls).toEqual([['the gateway itself']]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 20, msg: 'WhatsApp library: Closing session:', dropped: 1 });
    expect(JSON.stringify(lines)).not.toContain('SECRET-ROOT-KEY-MATERIAL');
    // Released: the console is the one before.
    expect(console.info).toBe(printed);
  });

  it('is rate-limited, and says how many lines it held back', async () => {
    let clock = 0;
    const { logger, lines } = collectingLogger();
    const release = captureLibraryConsole(logger, () => clock);
    try {
      const record = new SessionRecord();
      for (let i = 0; i < 50; i += 1) record.closeSession({ indexInfo: { closed: 1 } }); // "Session already closed"
      clock += 10_000;
      record.closeSession({ indexInfo: { closed: 1 } });
    } finally {
      release();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.filter((l) => String(l.msg).startsWith('WhatsApp library: Session already closed'))).toHaveLength(21);
    expect(lines.find((l) => l.suppressed !== undefined)).toMatchObject({ suppressed: 30 });
  });
});

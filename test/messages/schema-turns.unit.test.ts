// The message schemas compile after the gateway listens, one per turn of the event loop
// (`compileMessageSchemasInTurns`, src/messages/validate.ts): none at the call, all after enough turns, and no more
// once stopped. Fresh module instances, so that schemas compiled by other files of this process do not count.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Checks from '../../src/messages/checks.js';
import type * as Schemas from '../../src/messages/schemas.js';
import type * as Validate from '../../src/messages/validate.js';

type Modules = { validate: typeof Validate; checks: typeof Checks; schemas: typeof Schemas };

async function fresh(): Promise<Modules> {
  vi.resetModules();
  const [validate, checks, schemas] = await Promise.all([
    import('../../src/messages/validate.js'),
    import('../../src/messages/checks.js'),
    import('../../src/messages/schemas.js'),
  ]);
  return { validate, checks, schemas };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('the message schemas compiled in turns', () => {
  let m: Modules;
  beforeEach(async () => {
    m = await fresh();
  });

  function compiledCount(): number {
    const all = [m.schemas.CommonFields, m.schemas.SenderFields, ...Object.values(m.schemas.PARAMS)];
    return all.filter((schema) => m.checks.isCompiled(schema)).length;
  }

  it('compiles none at the call, one a turn, and all of them in the end', async () => {
    const total = 2 + Object.values(m.schemas.PARAMS).length;
    expect(compiledCount()).toBe(0);
    m.validate.compileMessageSchemasInTurns();
    expect(compiledCount()).toBe(0);
    await turn();
    expect(compiledCount()).toBe(1);
    for (let i = 0; i < 40 && compiledCount() < total; i++) await turn();
    expect(compiledCount()).toBe(total);
  });

  it('compiles no more once stopped', async () => {
    const stop = m.validate.compileMessageSchemasInTurns();
    await turn();
    await turn();
    stop();
    const at = compiledCount();
    expect(at).toBeGreaterThan(0);
    for (let i = 0; i < 10; i++) await turn();
    expect(compiledCount()).toBe(at);
  });

  it('a request before then compiles what it needs, and validates', async () => {
    m.validate.compileMessageSchemasInTurns();
    const valid = m.validate.validateSendRequest(
      { device: '6281234567890', receiver: '6281234567891', type: 'chat', params: { text: 'hi' } },
      { requireReceiver: true },
    );
    expect(valid.message).toBe('hi');
    expect(m.checks.isCompiled(m.schemas.PARAMS.chat)).toBe(true);
  });
});

// Issue 22, item 5: one host, one verdict, however the URL spells it. Properties over random
// spellings of IPv4 addresses (every radix and shorthand the WHATWG URL parser reads, upper-case
// hex, trailing dots), IPv4-mapped IPv6, and names under .localhost in any case.
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BlockedAddressError,
  allowListPolicy,
  canonicalHost,
  createGuardedDispatcher,
  destinationProblem,
  hostVerdict,
  isPublicAddress,
} from '../../src/outbound/index.js';
import { fakeLookup, startServer, type TestServer } from './helpers.js';

type Radix = 'dec' | 'hex' | 'oct';

function spell(value: number, radix: Radix, upper: boolean): string {
  if (radix === 'hex') {
    const hex = `0x${value.toString(16)}`;
    return upper ? hex.toUpperCase() : hex;
  }
  if (radix === 'oct') return `0${value.toString(8)}`;
  return String(value);
}

// An IPv4 address written as 1 to 4 parts; the last part carries all the remaining bytes.
const ipv4Spelling = fc
  .record({
    bytes: fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)),
    parts: fc.integer({ min: 1, max: 4 }),
    radixes: fc.array(fc.constantFrom<Radix>('dec', 'hex', 'oct'), { minLength: 4, maxLength: 4 }),
    upper: fc.boolean(),
    trailingDot: fc.boolean(),
  })
  .map(({ bytes, parts, radixes, upper, trailingDot }) => {
    const leading = bytes.slice(0, parts - 1);
    const rest = bytes.slice(parts - 1).reduce((acc, byte) => acc * 256 + byte, 0);
    const spelled = [...leading, rest].map((value, i) => spell(value, radixes[i] as Radix, upper));
    return { dotted: bytes.join('.'), host: spelled.join('.') + (trailingDot ? '.' : '') };
  });

const randomCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((flags) => Array.from(text, (char, i) => (flags[i] ? char.toUpperCase() : char)).join(''));

const localhostName = fc
  .record({
    sub: fc.option(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/), { nil: undefined }),
    dots: fc.integer({ min: 0, max: 2 }),
  })
  .chain(({ sub, dots }) =>
    randomCase(`${sub === undefined ? '' : `${sub}.`}localhost${'.'.repeat(dots)}`).map((host) => ({ host, sub })),
  );

describe('canonicalHost and hostVerdict', () => {
  it('reads every IPv4 spelling as its dotted quad and judges it as that address', () => {
    fc.assert(
      fc.property(ipv4Spelling, ({ dotted, host }) => {
        expect(canonicalHost(host)).toBe(dotted);
        expect(hostVerdict(isPublicAddress, host)).toBe(isPublicAddress(dotted) ? 'allowed' : 'refused');
      }),
      { numRuns: 2000 },
    );
  });

  it('judges an IPv4-mapped IPv6 spelling as the IPv4 address inside it', () => {
    fc.assert(
      fc.property(fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)), fc.boolean(), (bytes, hex) => {
        const dotted = bytes.join('.');
        const tail = hex
          ? `${((bytes[0] << 8) | bytes[1]).toString(16)}:${((bytes[2] << 8) | bytes[3]).toString(16)}`
          : dotted;
        const verdict = hostVerdict(isPublicAddress, `[::ffff:${tail}]`);
        expect(verdict).toBe(isPublicAddress(dotted) ? 'allowed' : 'refused');
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses localhost and every name under it in any case, with any trailing dots', () => {
    fc.assert(
      fc.property(localhostName, ({ host }) => {
        expect(hostVerdict(isPublicAddress, host)).toBe('refused');
      }),
    );
  });

  it('an allow-list entry `localhost` lets through exactly that name, however spelled', () => {
    const policy = allowListPolicy(['localhost']);
    fc.assert(
      fc.property(localhostName, ({ host, sub }) => {
        expect(hostVerdict(policy, host)).toBe(sub === undefined ? 'resolve' : 'refused');
      }),
    );
  });

  it('leaves other names to their resolved addresses, judged under the canonical name', async () => {
    expect(hostVerdict(isPublicAddress, 'example.test')).toBe('resolve');
    const lookup = fakeLookup({ 'hooks.lan.': '10.0.0.7', 'HOOKS.LAN': '10.0.0.7' });
    const policy = allowListPolicy(['hooks.lan']);
    expect(await destinationProblem('http://HOOKS.LAN./h', { policy, lookup })).toBeNull();
    expect(await destinationProblem('http://hooks.lan./h', { policy: isPublicAddress, lookup })).toMatch(
      /^the host resolves to an address that is not public/,
    );
  });

  it('refuses a loopback name before asking the resolver, which may not know it', async () => {
    let asked = 0;
    const lookup = ((...args: Parameters<ReturnType<typeof fakeLookup>>) => {
      asked++;
      return fakeLookup({})(...args);
    }) as ReturnType<typeof fakeLookup>;
    for (const url of ['http://localhost.:9/h', 'http://LOCALHOST.:9/h', 'http://a.localhost/h']) {
      expect(await destinationProblem(url, { policy: isPublicAddress, lookup }), url).toMatch(
        /^the host is an address that is not public/,
      );
    }
    expect(asked).toBe(0);
  });
});

// The connection guard every media download and webhook delivery goes through (at each attempt).
describe('the guarded connect, for loopback names', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((_req, res) => res.end('ok'));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses localhost. and friends as blocked before any lookup, whatever the resolver makes of them', async () => {
    // A resolver that knows none of them (as on some machines): "host not found" would hide the refusal
    // on one machine and let the name through on another where the resolver answers differently.
    const lookup = fakeLookup({});
    const dispatcher = createGuardedDispatcher({ policy: isPublicAddress, lookup, keepAlive: false });
    try {
      for (const host of ['localhost.', 'LOCALHOST.', 'a.localhost']) {
        const error = await request(`http://${host}:${server.port}/`, { dispatcher }).catch((err: unknown) => err);
        expect(error, host).toBeInstanceOf(BlockedAddressError);
      }
      expect(server.connections()).toBe(0);
    } finally {
      await dispatcher.close();
    }
  });

  it('lets localhost. through when the allow-list names localhost', async () => {
    const lookup = fakeLookup({ 'localhost.': '127.0.0.1' });
    const dispatcher = createGuardedDispatcher({ policy: allowListPolicy(['localhost']), lookup, keepAlive: false });
    try {
      const response = await request(`http://LOCALHOST.:${server.port}/`, { dispatcher });
      expect(await response.body.text()).toBe('ok');
    } finally {
      await dispatcher.close();
    }
  });
});

// GATEWAY_ALLOWED_PRIVATE_HOSTS (issue 10, item 20): exactly the named hosts and the CIDRs are
// allowed on top of the public-only policy, everything else stays refused, redirects included.
// Real loopback servers on 127.0.0.1 and 127.0.0.2; made-up names resolve through fakeLookup.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import {
  AllowListError,
  MediaFetchError,
  allowListPolicy,
  createGuardedDispatcher,
  destinationPolicy,
  destinationProblem,
  fetchMedia,
  isPublicAddress,
  parseAllowedPrivateHosts,
} from '../../src/outbound/index.js';
import { fakeLookup, fixture, startServer, type TestServer } from './helpers.js';

describe('parseAllowedPrivateHosts', () => {
  it('reads names, addresses and CIDRs, normalised, without duplicates or blanks', () => {
    expect(
      parseAllowedPrivateHosts(' n8n, Hooks.LAN. ,10.0.0.0/8,, 192.168.1.7 ,fd00::/8,[::1],n8n,my_service'),
    ).toEqual(['n8n', 'hooks.lan', '10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1', 'my_service']);
    expect(parseAllowedPrivateHosts('')).toEqual([]);
  });

  it.each([
    '10.0.0.0/33',
    '10.0.0',
    'http://n8n',
    'n8n:5678',
    'a..b',
    '-bad',
    'x'.repeat(64),
    'space host',
    '1.2.3.4.5',
  ])('refuses %s with a message naming it', (entry) => {
    expect(() => parseAllowedPrivateHosts(`n8n,${entry}`)).toThrow(AllowListError);
    expect(() => parseAllowedPrivateHosts(`n8n,${entry}`)).toThrow(`"${entry.trim()}"`);
  });
});

describe('allowListPolicy', () => {
  const policy = allowListPolicy(parseAllowedPrivateHosts('n8n,hooks.lan,10.1.2.0/24,fd00:1::/64,192.168.5.5'));

  it('allows a listed name whatever it resolves to, and only that name', () => {
    expect(policy('172.18.0.4', 'n8n')).toBe(true);
    expect(policy('172.18.0.4', 'N8N.')).toBe(true);
    expect(policy('169.254.169.254', 'hooks.lan')).toBe(true);
    expect(policy('172.18.0.4', 'n8n.evil.test')).toBe(false);
    expect(policy('172.18.0.4', 'other')).toBe(false);
    expect(policy('172.18.0.4')).toBe(false);
  });

  it('allows addresses inside a CIDR and refuses the neighbours just outside it', () => {
    expect(policy('10.1.2.0', '10.1.2.0')).toBe(true);
    expect(policy('10.1.2.255', 'some.name')).toBe(true);
    expect(policy('10.1.1.255', '10.1.1.255')).toBe(false);
    expect(policy('10.1.3.0', '10.1.3.0')).toBe(false);
    expect(policy('192.168.5.5', '192.168.5.5')).toBe(true);
    expect(policy('192.168.5.6', '192.168.5.6')).toBe(false);
    expect(policy('fd00:1::7', 'fd00:1::7')).toBe(true);
    expect(policy('fd00:2::7', 'fd00:2::7')).toBe(false);
  });

  it('matches the IPv4-mapped IPv6 spelling of an allowed address, and nothing else private', () => {
    expect(policy('::ffff:10.1.2.9', '::ffff:10.1.2.9')).toBe(true);
    expect(policy('::ffff:10.1.3.9', '::ffff:10.1.3.9')).toBe(false);
    expect(policy('127.0.0.1', 'localhost')).toBe(false);
    expect(policy('169.254.169.254', '169.254.169.254')).toBe(false);
  });

  it('keeps public addresses allowed', () => {
    expect(policy('8.8.8.8', 'dns.google')).toBe(true);
  });

  it('is the public-only policy with no entries, and lifted entirely by GATEWAY_ALLOW_PRIVATE_URLS', () => {
    expect(destinationPolicy({ allowPrivateUrls: false, allowedPrivateHosts: [] })).toBe(isPublicAddress);
    expect(destinationPolicy({ allowPrivateUrls: true, allowedPrivateHosts: ['n8n'] })).toBe('allow-all');
  });
});

describe('the allow-list on real connections', () => {
  let main: TestServer;
  let other: TestServer;
  const agents: Agent[] = [];
  beforeAll(async () => {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/redirect') {
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(fixture('tiny.png'));
    };
    main = await startServer(handler, '127.0.0.1');
    other = await startServer(handler, '127.0.0.2');
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.close()));
    await main?.close();
    await other?.close();
  });

  function agentFor(setting: string): Agent {
    const agent = createGuardedDispatcher({
      policy: destinationPolicy({ allowPrivateUrls: false, allowedPrivateHosts: parseAllowedPrivateHosts(setting) }),
      lookup: fakeLookup({ 'media.lan': '127.0.0.1', 'internal.lan': '127.0.0.2', 'twin.lan': '127.0.0.1' }),
      keepAlive: false,
    });
    agents.push(agent);
    return agent;
  }

  async function reason(url: string, dispatcher: Agent): Promise<string> {
    try {
      await fetchMedia(url, { maxBytes: 1024 * 1024, dispatcher, timeoutMs: 5000 });
    } catch (error) {
      expect(error).toBeInstanceOf(MediaFetchError);
      return `${(error as MediaFetchError).reason}: ${(error as MediaFetchError).detail}`;
    }
    return 'fetched';
  }

  it('fetches from an allowed name', async () => {
    expect(await reason(`http://media.lan:${main.port}/a.png`, agentFor('media.lan'))).toBe('fetched');
  });

  it('fetches from an address inside an allowed CIDR', async () => {
    expect(await reason(main.url('/a.png'), agentFor('127.0.0.0/31'))).toBe('fetched');
  });

  it('refuses the neighbour just outside the CIDR, without connecting', async () => {
    const before = other.connections();
    expect(await reason(other.url('/a.png'), agentFor('127.0.0.0/31'))).toBe(
      'blocked_address: destination address is not allowed',
    );
    expect(other.connections()).toBe(before);
  });

  it('refuses a name not on the list even when it resolves where an allowed name does', async () => {
    expect(await reason(`http://twin.lan:${main.port}/a.png`, agentFor('media.lan'))).toBe(
      'blocked_address: destination address is not allowed',
    );
  });

  it('refuses a redirect from an allowed host to a private host that is not allowed', async () => {
    const before = other.connections();
    const agent = agentFor('media.lan');
    for (const to of [other.url('/a.png'), `http://internal.lan:${other.port}/a.png`]) {
      const url = `http://media.lan:${main.port}/redirect?to=${encodeURIComponent(to)}`;
      expect(await reason(url, agent)).toBe('blocked_address: redirect target address is not allowed');
    }
    expect(other.connections()).toBe(before);
    // The same redirect is followed once its target is allowed too.
    const both = agentFor('media.lan,internal.lan');
    const url = `http://media.lan:${main.port}/redirect?to=${encodeURIComponent(`http://internal.lan:${other.port}/a.png`)}`;
    expect(await reason(url, both)).toBe('fetched');
  });
});

describe('destinationProblem (the early warning on PATCH)', () => {
  const lookup = fakeLookup({ 'hooks.lan': ['127.0.0.1'], 'mixed.test': ['93.184.216.34', '10.0.0.1'] });
  const publicOnly = { policy: isPublicAddress, lookup };

  it('names the reason and the settings for a private literal or a name resolving to private space', async () => {
    for (const url of ['http://127.0.0.1:9/h', 'http://[::1]/h', 'https://[::ffff:10.0.0.1]/h']) {
      const problem = await destinationProblem(url, publicOnly);
      expect(problem, url).toMatch(/^the host is an address that is not public/);
      expect(problem).toContain('GATEWAY_ALLOWED_PRIVATE_HOSTS');
      expect(problem).toContain('GATEWAY_ALLOW_PRIVATE_URLS');
    }
    expect(await destinationProblem('http://hooks.lan/h', publicOnly)).toMatch(
      /^the host resolves to an address that is not public.*GATEWAY_ALLOWED_PRIVATE_HOSTS/,
    );
    // Delivery refuses a name with any private address, so the warning does too.
    expect(await destinationProblem('http://mixed.test/h', publicOnly)).not.toBeNull();
  });

  it('lets through what it cannot judge and what the settings allow', async () => {
    expect(await destinationProblem('http://unknown.test/h', publicOnly)).toBeNull();
    expect(await destinationProblem('http://93.184.216.34/h', publicOnly)).toBeNull();
    const slow = { policy: isPublicAddress, lookup: () => undefined, timeoutMs: 50 };
    expect(await destinationProblem('http://slow.test/h', slow)).toBeNull();
    const allowed = { policy: allowListPolicy(['hooks.lan', '127.0.0.0/8']), lookup };
    expect(await destinationProblem('http://hooks.lan/h', allowed)).toBeNull();
    expect(await destinationProblem('http://127.0.0.9/h', allowed)).toBeNull();
    expect(await destinationProblem('http://127.0.0.1/h', { policy: 'allow-all' })).toBeNull();
  });
});

// Issue 10, item 11: no secret is ever logged, wherever the client puts it
// (query string, unexpected headers, a webhook URL with credentials). Every
// line the gateway writes at the most verbose level is captured and searched.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { urlForLog } from '../../src/http/log-redaction.js';

const SECRETS = {
  apiKey: 'B6D711FCDE4D4FD5936544120E713976',
  headerKey: 'hdr-secret-7f3a9c2e11',
  accessToken: 'opaque-access-token-5521',
  webhookPassword: 'hunter2-webhook-pw',
  pathToken: 'mgw_looks_like_a_token_in_the_path_0000000000',
};

describe.skipIf(noStoreAvailable)('secrets are never logged', () => {
  let gw: TestGateway;
  let logged = '';

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged += chunk.toString('utf8');
        done();
      },
    });
    gw = await startGateway({
      build: { logger: { ...(loggerOptions({ ...loadConfig({}), logLevel: 'trace' }) as object), stream } as never },
    });
  });
  afterAll(() => gw?.close());

  it('keeps tokens and keys out of the log, in the query string, headers, paths and webhook URLs', async () => {
    const asQuery = await gw.request('GET', `/devices?token=${TEST_TOKEN}`, undefined, null);
    expect(asQuery.status).toBe(401);
    const apikey = await gw.request('GET', `/devices?apikey=${SECRETS.apiKey}&page=2`);
    expect(apikey.status).toBe(200);
    const unknown = await gw.request('GET', `/devices?access_token=${SECRETS.accessToken}`, undefined, null);
    expect(unknown.status).toBe(401);
    const onMissingRoute = await gw.request('GET', `/no/such/route?key=${SECRETS.apiKey}&x=${TEST_TOKEN}`);
    expect(onMissingRoute.status).toBe(404);
    const inPath = await gw.request('GET', `/devices/${SECRETS.pathToken}`);
    expect(inPath.status).toBe(404);
    const headers = await gw.app.inject({
      method: 'GET',
      url: '/devices',
      headers: {
        authorization: `Bearer ${TEST_TOKEN}`,
        'x-api-key': SECRETS.headerKey,
        apikey: SECRETS.headerKey,
        cookie: `session=${SECRETS.headerKey}`,
      },
    });
    expect(headers.statusCode).toBe(200);
    const device = await gw.request('POST', '/devices', { package: 'BETA', name: 'logs' });
    const patched = await gw.request('PATCH', `/devices/${device.body.data.id}`, {
      webhook_url: `https://user:${SECRETS.webhookPassword}@hooks.example.com/in`,
    });
    expect(patched.status).toBe(200);
    const webhookSecret = String(device.body.data.webhook_secret);

    // Lines were written, request lines among them, with what is safe to show.
    const lines = logged.split('\n').filter((line) => line !== '');
    const urls = lines.map((line) => JSON.parse(line) as { url?: string }).flatMap((line) => line.url ?? []);
    expect(urls).toContain('/devices?token=[redacted]');
    expect(urls).toContain('/devices?apikey=[redacted]&page=2');
    expect(urls).toContain('/devices?access_token=[redacted]');
    expect(urls).toContain('/no/such/route?key=[redacted]&x=[redacted]');
    expect(urls).toContain('/devices/[redacted]');

    for (const secret of [TEST_TOKEN, webhookSecret, ...Object.values(SECRETS)]) {
      expect(logged, secret).not.toContain(secret);
    }
    expect(logged.toLowerCase()).not.toContain('bearer');
  });
});

describe('urlForLog', () => {
  it('keeps declared query values and redacts every other value and anything shaped like a secret', () => {
    const declared = new Set(['page', 'per_page']);
    expect(urlForLog('/devices?page=2&per_page=5', declared)).toBe('/devices?page=2&per_page=5');
    expect(urlForLog('/devices?page=2&apikey=abc&flag', declared)).toBe('/devices?page=2&apikey=[redacted]&flag');
    expect(urlForLog('/devices?per%5Fpage=5', declared)).toBe('/devices?per%5Fpage=5');
    expect(urlForLog(`/devices?page=${TEST_TOKEN}`, declared)).toBe('/devices?page=[redacted]');
    expect(urlForLog(`/x/${TEST_TOKEN}/y`)).toBe('/x/[redacted]/y');
    expect(urlForLog('/x?whsec_abc/d+e')).toBe('/x?[redacted]');
    expect(urlForLog('/devices')).toBe('/devices');
  });
});

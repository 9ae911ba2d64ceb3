// The front page's first message works as printed (issue 22): the five lines of curl in README.md, run by bash
// against a gateway process on a fresh store exactly as written (only the address and the token of the first line
// are this run's), create a device, pair it through the sandbox, send a message and find it in the phone's inbox.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newStoreLocation, noStoreAvailable, TEST_TOKEN, type StoreLocation } from '../helpers/gateway.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/built.js';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';
import { waitFor } from '../helpers/wait.js';

const run = promisify(execFile);
const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

/** The shell block under "A first message": its lines, as printed. */
function firstMessageLines(): string[] {
  const section = README.slice(README.indexOf('## A first message'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (block === null) throw new Error('README.md has no shell block under "A first message"');
  return block[1]!.trimEnd().split('\n');
}

// On both stores: `POST /sandbox/scan` answers once the pairing is recorded, so the send that follows it finds the device.
describe.skipIf(noStoreAvailable)('README: a first message in five lines of curl', () => {
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  let location: StoreLocation;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    location = await newStoreLocation();
    gateway = await startGatewayProcess(location, { GATEWAY_SEND_INTERVAL_MS: '0' });
  });

  afterAll(async () => {
    await gateway?.stop();
    await location?.drop();
  });

  it('is five curl lines after the settings', () => {
    const [settings, ...commands] = firstMessageLines();
    expect(settings).toMatch(/^export GW=http:\/\/127\.0\.0\.1:3000 TOKEN=mgw_\.\.\.\s+#/);
    expect(commands).toHaveLength(5);
    for (const command of commands) expect(command).toContain('curl -s');
  });

  it('pairs a device, sends a message and finds it in the phone’s inbox, as printed', async () => {
    const [settings, ...commands] = firstMessageLines();
    const ours = settings!.replace(
      /^export GW=\S+ TOKEN=\S+/,
      `export GW=http://127.0.0.1:${gateway.port} TOKEN=${TEST_TOKEN}`,
    );
    const script = [ours, ...commands].join('\n');
    // Each curl prints one JSON answer without a newline; the second line prints nothing (it sets QR).
    const { stdout } = await run('bash', ['-e', '-c', script], { env: { PATH: process.env.PATH ?? '' } });
    const answers = stdout.replace(/\}\{/g, '}\n{').split('\n');
    expect(answers.slice(0, 3).map((a) => JSON.parse(a).message)).toEqual([
      'Device created',
      'QR code scanned',
      'Message sent successfully',
    ]);
    const sent = JSON.parse(answers[2]!).data;
    expect(sent).toMatchObject({ device: '6281234567890', receiver: '6289876543210', status: 'pending' });
    // The last line, the phone: the message is in its inbox once sent (a moment after the answer).
    const inboxCommand = commands.at(-1)!;
    const inboxHolds = async () => {
      const { stdout: phone } = await run('bash', ['-e', '-c', `${ours}\n${inboxCommand}`], {
        env: { PATH: process.env.PATH ?? '' },
      });
      const inbox = JSON.parse(phone).data.inbox as { message_id: string; content: { text: string } }[];
      return inbox.some((m) => m.message_id === sent.id && m.content.text === 'Hello from the gateway');
    };
    // A guard against a hang, not a measurement: the message leaves within milliseconds.
    await waitFor(inboxHolds, (held) => held, { timeoutMs: 20_000, intervalMs: 100, what: 'the message in the inbox' });
  });
});

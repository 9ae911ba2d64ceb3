// On PostgreSQL, POST /messages commits in a commit stream of its own (docs/internals.md, Sending): an acceptance
// never waits behind the status writes' group commit under way. Here a status write is held up for as long as the
// test likes (another session holds the device's lease row, which the status writes' fence share-locks), and a
// message sent meanwhile is answered, and stored, while that very statement still waits. With one shared stream the
// answer could only come once the waiting statement had ended (cancelled by the statement timeout: a 503).
// SQLite has one writer, and one stream: nothing to test there.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

interface Waiting {
  readonly pid: number;
  readonly query_start: Date;
}

describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('acceptance beside the status writes', () => {
  let gw: TestGateway;
  let locker: pg.Client;
  const device = '4915100000091';
  const receiver = '4917600000092';

  beforeAll(async () => {
    gw = await startGateway({ config: { sendIntervalMs: 0 } });
    await createPairedDevice(gw, device);
    locker = new pg.Client({ connectionString: gw.location.databaseUrl! });
    await locker.connect();
  });
  afterAll(async () => {
    await locker?.end();
    await gw?.close();
  });

  /** The sessions waiting for a lock the locker holds (the status writes' fence, once it runs). */
  async function waitingOnLocker(): Promise<Waiting[]> {
    const { rows } = await locker.query<Waiting>(
      'select pid, query_start from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
      [(locker as unknown as { processID: number }).processID],
    );
    return rows;
  }

  const send = (text: string) => gw.request('POST', '/messages', { device, receiver, type: 'chat', params: { text } });

  async function status(id: string): Promise<string> {
    return (await gw.request('GET', `/messages/${id}`)).body.data.status as string;
  }

  it('answers a send while the status writes’ commit waits for a lock', async () => {
    await locker.query('begin');
    const lease = await locker.query(
      `select 1 from device_leases l join devices d on d.id = l.device_id where d.phone = $1 for update of l`,
      [device],
    );
    expect(lease.rowCount).toBe(1);

    // The first message is accepted; the network takes it, and its `sent` waits for the lease row.
    const first = await send('first');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const [blocked] = await waitFor(waitingOnLocker, (rows) => rows.length === 1, { what: 'a status write waiting' });

    const second = await send('second');
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(await status(second.body.data.id as string)).toBe('pending');
    // Still the same statement waiting: the answer did not wait for it to end.
    expect(await waitingOnLocker()).toEqual([blocked]);

    await locker.query('commit');
    for (const answer of [first, second]) {
      await waitFor(
        () => status(answer.body.data.id as string),
        (s) => s !== 'pending',
        {
          what: 'the message sent',
        },
      );
    }
  });
});

// Requests that need a device's live connection and reach a node that does not
// hold it (docs/internals.md, Clusters): passed to the holder; when the holder does not answer,
// or is down with nobody holding the device yet, the answer is 503 `Device
// unavailable, retry shortly` with Retry-After, at once and never a hang; a
// request already forwarded once is never forwarded again.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { deviceRow } from '../helpers/rows.js';

const UNAVAILABLE = { code: 503, status: 503, message: 'Device unavailable, retry shortly' };

describe.skipIf(storeKind !== 'postgres' || noStoreAvailable)('forwarding to the holding node', () => {
  const open: TestGateway[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()));
  });

  /**
   * A gateway whose own rounds do not run during the test, and a device leased to `holder`. The rows are written
   * straight into the store in one transaction, once the gateway is started and through its first round: a device made through the API
   * would wake the gateway (its own notification arrives later), and a round between the writes could insert the
   * device's lease first or take the device over from a holder that is down.
   */
  async function setup(holder: { heartbeatAgoMs: number; url: string }) {
    const gw = await startGateway({ build: { cluster: { heartbeatMs: 3_600_000 } } });
    open.push(gw);
    // Started (the first request would start it, and its first round), its listener connected (which wakes a round),
    // and through those rounds.
    await gw.app.ready();
    await gw.app.services.cluster.listening();
    await gw.app.services.cluster.node!.roundNow();
    const { db } = gw.app.store;
    const now = Date.now();
    const id = await db.transaction().execute(async (trx) => {
      const account = await trx
        .selectFrom('accounts')
        .select('id')
        .where('name', '=', 'default')
        .executeTakeFirstOrThrow();
      const device = await trx
        .insertInto('devices')
        .values(
          deviceRow(Number(account.id), {
            name: 'elsewhere',
            paired_status: 'PAIRED',
            phone: '6281234599001',
            network_session: 'far-away',
            server_name: 'ghost',
            connected: 1,
          }),
        )
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('cluster_nodes')
        .values({
          name: 'ghost',
          instance: 'x',
          url: holder.url,
          started_at: now - 60_000,
          heartbeat_at: now - holder.heartbeatAgoMs,
          stopped_at: null,
        })
        .execute();
      await trx
        .insertInto('device_leases')
        .values({ device_id: Number(device.id), node: 'ghost', epoch: 3, acquired_at: now })
        .execute();
      return Number(device.id);
    });
    return { gw, id };
  }

  it('answers 503 with Retry-After at once when the live holder cannot be reached', async () => {
    const { gw, id } = await setup({ heartbeatAgoMs: 0, url: 'http://127.0.0.1:9' });
    for (const [method, url, body] of [
      ['GET', `/devices/${id}/qr?response_type=url`, undefined],
      ['POST', `/devices/${id}/restart`, {}],
      ['POST', '/contacts/check', { device: '6281234599001', phones: ['6281234599002'] }],
    ] as const) {
      const started = Date.now();
      const res = await gw.request(method, url, body);
      expect(res.status, url).toBe(503);
      expect(res.body).toEqual(UNAVAILABLE);
      expect(res.headers['retry-after']).toBe('5');
      // At once: a refused connection, not the 20 s answer timeout (10 s of slack for a loaded machine).
      expect(Date.now() - started).toBeLessThan(10_000);
    }
    // Durable work is accepted by any node, whoever holds the device (once this node has seen the holder up).
    await gw.app.services.cluster.node!.roundNow();
    const sent = await gw.request('POST', '/messages', {
      device: '6281234599001',
      receiver: '6281234599002',
      type: 'chat',
      message: 'queued here, sent by the holder',
    });
    expect(sent.status).toBe(200);
    // The device object names its holder, seen as up.
    expect((await gw.request('GET', `/devices/${id}`)).body.data.server).toEqual({ name: 'ghost', status: 'ACTIVE' });
  });

  it('answers 503 while the holder is down and nobody took the device over yet', async () => {
    const { gw, id } = await setup({ heartbeatAgoMs: 20_000, url: 'http://127.0.0.1:9' });
    // "Not yet": the down holder's row is locked as by a heartbeat of its still in flight, which a takeover skips
    // (docs/internals.md, Clusters); a round of this gateway (woken, say, when its listener connects) therefore leaves the device.
    const heartbeat = new pg.Client({ connectionString: gw.location.databaseUrl! });
    await heartbeat.connect();
    try {
      await heartbeat.query('begin');
      await heartbeat.query(`select 1 from cluster_nodes where name = 'ghost' for update`);
      await gw.app.services.cluster.node!.roundNow();
      const lease = await gw.app.store.db
        .selectFrom('device_leases')
        .select(['node', 'epoch'])
        .where('device_id', '=', id)
        .executeTakeFirstOrThrow();
      expect(lease).toEqual({ node: 'ghost', epoch: 3 });
      const res = await gw.request('POST', `/devices/${id}/logout`, {});
      expect(res.status).toBe(503);
      expect(res.body).toEqual(UNAVAILABLE);
      expect(res.headers['retry-after']).toBe('5');
      expect((await gw.request('GET', `/devices/${id}`)).body.data.server).toEqual({ name: 'ghost', status: 'DOWN' });
      // Deleting needs no connection: with no live holder the node that got the request deletes it.
      const deleted = await gw.request('DELETE', `/devices/${id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body.message).toBe('Device deleted');
    } finally {
      await heartbeat.query('rollback').catch(() => undefined);
      await heartbeat.end();
    }
  });

  it('never forwards a forwarded request again', async () => {
    // The "holder" is this very gateway's address: without the hop header the request would come back forever.
    const gw = await startGateway({ build: { cluster: { heartbeatMs: 3_600_000 } } });
    open.push(gw);
    const address = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    await gw.close();
    open.pop();
    const { gw: other, id } = await setup({ heartbeatAgoMs: 0, url: address });
    const res = await other.app.inject({
      method: 'POST',
      url: `/devices/${id}/restart`,
      headers: { authorization: `Bearer ${other.config.bootstrapToken}`, 'x-gateway-forwarded-by': 'ghost' },
      payload: {},
    });
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body)).toEqual(UNAVAILABLE);
  });
});

// Requests that need a device's live connection and reach a node that does not
// hold it (DECISIONS 11): passed to the holder; when the holder does not answer,
// or is down with nobody holding the device yet, the answer is 503 `Device
// unavailable, retry shortly` with Retry-After, at once and never a hang; a
// request already forwarded once is never forwarded again.
import { afterEach, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';

const UNAVAILABLE = { code: 503, status: 503, message: 'Device unavailable, retry shortly' };

describe.skipIf(storeKind !== 'postgres' || noStoreAvailable)('forwarding to the holding node', () => {
  const open: TestGateway[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()));
  });

  /** A gateway whose own rounds do not run during the test (one at start), and a device leased to `holder`. */
  async function setup(holder: { heartbeatAgoMs: number; url: string }) {
    const gw = await startGateway({ build: { cluster: { heartbeatMs: 3_600_000 } } });
    open.push(gw);
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'elsewhere' });
    const id = created.body.data.id as number;
    const { db } = gw.app.store;
    const now = Date.now();
    await db
      .updateTable('devices')
      .set({
        paired_status: 'PAIRED',
        phone: '6281234599001',
        network_session: 'far-away',
        server_name: 'ghost',
        connected: 1,
      })
      .where('id', '=', id)
      .execute();
    await db
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
    await db.insertInto('device_leases').values({ device_id: id, node: 'ghost', epoch: 3, acquired_at: now }).execute();
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
    const res = await gw.request('POST', `/devices/${id}/logout`, {});
    expect(res.status).toBe(503);
    expect(res.body).toEqual(UNAVAILABLE);
    expect(res.headers['retry-after']).toBe('5');
    expect((await gw.request('GET', `/devices/${id}`)).body.data.server).toEqual({ name: 'ghost', status: 'DOWN' });
    // Deleting needs no connection: with no live holder the node that got the request deletes it.
    const deleted = await gw.request('DELETE', `/devices/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.message).toBe('Device deleted');
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

// What an operator sees of the cluster (docs/internals.md, Clusters): `gateway cluster status`
// lists each node with its status, heartbeat age and device counts; /metrics
// carries the same per node; a device's `server` names its node and whether it
// is up. With SQLite the command says there is one node.
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/main.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';

async function status(gw: TestGateway): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const io: CliIo = {
    env: {
      GATEWAY_DATA_DIR: gw.location.dataDir,
      GATEWAY_SERVER_NAME: 'test-node',
      ...(gw.location.databaseUrl === null ? {} : { DATABASE_URL: gw.location.databaseUrl }),
    },
    out: (line) => out.push(line),
    err: (line) => out.push(line),
  };
  const code = await runCli(['cluster', 'status'], io);
  return { code, out: out.join('\n') };
}

describe.skipIf(noStoreAvailable)('cluster status', () => {
  const open: TestGateway[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()));
  });

  it.skipIf(storeKind !== 'postgres')(
    'lists the nodes with status, heartbeat age and device counts; /metrics per node',
    async () => {
      const gw = await startGateway({ config: { serverName: 'node-x' } });
      open.push(gw);
      const device = await createPairedDevice(gw, '6281234500011');
      expect(device.server).toEqual({ name: 'node-x', status: 'ACTIVE' });
      // A node that stopped long ago, as another process would have left it.
      await gw.app.store.db
        .insertInto('cluster_nodes')
        .values({
          name: 'node-old',
          instance: 'gone',
          url: 'http://127.0.0.1:9',
          started_at: 1,
          heartbeat_at: 1,
          stopped_at: 2,
        })
        .execute();

      const { code, out } = await status(gw);
      expect(code).toBe(0);
      const [header, ...rows] = out.split('\n');
      expect(header).toBe('node\tstatus\theartbeat_age_s\tdevices\tconnected\turl');
      const byNode = new Map(rows.map((row) => row.split('\t')).map(([node, ...rest]) => [node, rest]));
      expect(byNode.get('node-x')?.slice(0, 1)).toEqual(['ACTIVE']);
      expect(Number(byNode.get('node-x')?.[1])).toBeLessThan(15);
      expect(byNode.get('node-x')?.slice(2, 4)).toEqual(['1', '1']);
      expect(byNode.get('node-old')?.[0]).toBe('DOWN');

      const metrics = await gw.request('GET', '/metrics');
      expect(metrics.body).toContain('gateway_cluster_node_up{node="node-x"} 1');
      expect(metrics.body).toContain('gateway_cluster_node_up{node="node-old"} 0');
      expect(metrics.body).toContain('gateway_cluster_node_devices{node="node-x"} 1');
      expect(metrics.body).toContain('gateway_cluster_node_connected_devices{node="node-x"} 1');
      expect(metrics.body).toContain('gateway_cluster_devices_held_here 1');
    },
  );

  it.skipIf(storeKind !== 'sqlite')('says there is one node with SQLite', async () => {
    const gw = await startGateway();
    open.push(gw);
    expect(await status(gw)).toEqual({
      code: 0,
      out: 'One node (SQLite store): test-node. A cluster needs DATABASE_URL=postgres://...',
    });
  });
});

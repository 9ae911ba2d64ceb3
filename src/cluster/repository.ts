/**
 * SQL of the cluster (PostgreSQL only): nodes and their heartbeats, device
 * leases, claims, releases and the fence.
 *
 * Owns: the `cluster_nodes` and `device_leases` tables.
 * Must never: decide how many devices to claim or when (node.ts and
 * balance.ts decide and pass the values in).
 */
import { sql } from 'kysely';
import type { Db } from '../store/schema.js';

/** One lease of a device: which claim of it (the epoch), so that releasing it never ends a later claim. */
export interface LeaseRef {
  readonly deviceId: number;
  readonly epoch: number;
}

/** A lease as its node sees it after a heartbeat. */
export interface HeldLease {
  readonly deviceId: number;
  readonly epoch: number;
  /** The device still needs a connection (paired, active, not deleted). */
  readonly wanted: boolean;
}

export interface NodeRow {
  readonly name: string;
  readonly url: string;
  readonly startedAt: number;
  readonly heartbeatAt: number;
  readonly stoppedAt: number | null;
  /** Devices whose lease this node holds. */
  readonly devices: number;
  /** Of those, connected now (the device rows say so). */
  readonly connected: number;
}

/** Where a device's lease is, for routing a request to its holder. */
export interface Placement {
  readonly node: string | null;
  readonly epoch: number;
  readonly url: string | null;
  readonly heartbeatAt: number | null;
  readonly stoppedAt: number | null;
}

/** A device that needs a connection, as a SQL condition on `d` (the devices table). */
const WANTED = sql`d.paired_status = 'PAIRED' and d.status = 'ACTIVE' and d.deleted_at is null and d.network_session is not null`;

function n(value: unknown): number {
  return Number(value);
}

/**
 * The other nodes that are down (stopped, or silent since `cutoff`), their rows share-locked for the
 * caller's transaction: a heartbeat racing a takeover either commits first or waits for it.
 */
async function downNodes(db: Db, self: string, cutoff: number): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from cluster_nodes
    where name <> ${self} and (stopped_at is not null or heartbeat_at < ${cutoff})
    for share skip locked
  `.execute(db);
  return rows.map((r) => r.name);
}

export const clusterRepository = {
  /** Registers (or re-registers after a restart) the node under this process's instance id. */
  announce: async (db: Db, node: { name: string; instance: string; url: string; now: number }) => {
    await sql`
      insert into cluster_nodes (name, instance, url, started_at, heartbeat_at, stopped_at)
      values (${node.name}, ${node.instance}, ${node.url}, ${node.now}, ${node.now}, null)
      on conflict (name) do update set instance = excluded.instance, url = excluded.url,
        started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, stopped_at = null
    `.execute(db);
  },

  /**
   * Renews the node's heartbeat (and with it every lease it holds); null when another
   * process took the node's name over. Answers the leases the node holds now.
   */
  heartbeat: async (db: Db, node: { name: string; instance: string; now: number }): Promise<HeldLease[] | null> => {
    const renewed = await sql`
      update cluster_nodes set heartbeat_at = ${node.now}
      where name = ${node.name} and instance = ${node.instance} and stopped_at is null
      returning name
    `.execute(db);
    if (renewed.rows.length === 0) return null;
    const { rows } = await sql<{ device_id: unknown; epoch: unknown; wanted: boolean | null }>`
      select l.device_id, l.epoch, (${WANTED}) as wanted
      from device_leases l left join devices d on d.id = l.device_id
      where l.node = ${node.name}
    `.execute(db);
    return rows.map((r) => ({ deviceId: n(r.device_id), epoch: n(r.epoch), wanted: r.wanted === true }));
  },

  /** Devices that need a connection, and the nodes alive at `cutoff` (heartbeat since, not stopped). */
  census: async (db: Db, cutoff: number): Promise<{ wanted: number; liveNodes: string[] }> => {
    const { rows } = await sql<{ wanted: unknown; live: string[] | null }>`
      select (select count(*) from devices d where ${WANTED}) as wanted,
        (select array_agg(name) from cluster_nodes where stopped_at is null and heartbeat_at >= ${cutoff}) as live
    `.execute(db);
    return { wanted: n(rows[0]?.wanted ?? 0), liveNodes: rows[0]?.live ?? [] };
  },

  /**
   * Takes up to `limit` devices that need a connection and whose lease is free:
   * released, never held, or held by a node that is down (silent since `cutoff`,
   * or stopped). Every takeover increments the epoch. The down nodes' rows are
   * share-locked first, so a heartbeat racing this claim either commits before
   * (and the node is not down) or waits for it (and then sees its leases gone).
   * Leases another transaction holds (a fenced write in flight) are skipped.
   */
  claim: async (
    db: Db,
    p: { name: string; now: number; cutoff: number; limit: number },
  ): Promise<Array<{ deviceId: number; epoch: number }>> => {
    if (p.limit <= 0) return [];
    await sql`
      insert into device_leases (device_id, node, epoch, acquired_at)
      select d.id, null, 0, 0 from devices d
      where ${WANTED} and not exists (select 1 from device_leases l where l.device_id = d.id)
      on conflict (device_id) do nothing
    `.execute(db);
    const downNames = await downNodes(db, p.name, p.cutoff);
    const { rows } = await sql<{ device_id: unknown; epoch: unknown }>`
      update device_leases set node = ${p.name}, epoch = epoch + 1, acquired_at = ${p.now}
      where device_id in (
        select l.device_id from device_leases l join devices d on d.id = l.device_id
        where ${WANTED}
          and (l.node is null or l.node = any(${downNames}::text[])
               or not exists (select 1 from cluster_nodes c where c.name = l.node))
        order by l.device_id
        limit ${p.limit}
        for update of l skip locked
      )
      returning device_id, epoch
    `.execute(db);
    return rows.map((r) => ({ deviceId: n(r.device_id), epoch: n(r.epoch) }));
  },

  /** Takes one device whatever its paired state (a pairing attempt), unless a live node holds it. */
  claimOne: async (db: Db, p: { name: string; deviceId: number; now: number; cutoff: number }) => {
    await sql`
      insert into device_leases (device_id, node, epoch, acquired_at) values (${p.deviceId}, null, 0, 0)
      on conflict (device_id) do nothing
    `.execute(db);
    const downNames = await downNodes(db, p.name, p.cutoff);
    const { rows } = await sql<{ epoch: unknown }>`
      update device_leases set node = ${p.name}, epoch = epoch + 1, acquired_at = ${p.now}
      where device_id = ${p.deviceId}
        and (node is null or node = ${p.name} or node = any(${downNames}::text[])
             or not exists (select 1 from cluster_nodes c where c.name = device_leases.node))
      returning epoch
    `.execute(db);
    return rows.length === 0 ? null : n(rows[0]!.epoch);
  },

  /**
   * Releases the node's leases (all, or the given ones): free for any node to claim; epochs kept. A given lease is
   * released only while its epoch is unchanged: a release that lands after the same node claimed the device again
   * (a pairing attempt ended, then a new one started) leaves the newer lease alone.
   */
  release: async (db: Db, name: string, leases?: ReadonlyArray<LeaseRef>): Promise<number> => {
    if (leases !== undefined && leases.length === 0) return 0;
    const only =
      leases === undefined
        ? sql``
        : sql`and (device_id, epoch) in (select * from unnest(${leases.map((l) => l.deviceId)}::bigint[], ${leases.map((l) => l.epoch)}::bigint[]))`;
    const result = await sql`update device_leases set node = null where node = ${name} ${only}`.execute(db);
    return Number(result.numAffectedRows ?? 0n);
  },

  /**
   * A deleted device's lease ends in the deleting transaction. Fenced writes under way hold the row
   * (share lock) and commit first, so what they recorded is seen by the rest of that transaction;
   * any later one finds no holder and is refused.
   */
  endLease: async (db: Db, deviceId: number): Promise<void> => {
    await sql`update device_leases set node = null where device_id = ${deviceId}`.execute(db);
  },

  /** The address other nodes forward to, once known (the port is chosen when the node listens). */
  setUrl: async (db: Db, name: string, instance: string, url: string): Promise<void> => {
    await sql`update cluster_nodes set url = ${url} where name = ${name} and instance = ${instance}`.execute(db);
  },

  /** A clean stop: the node is DOWN at once. */
  stop: async (db: Db, node: { name: string; instance: string; now: number }): Promise<void> => {
    await sql`
      update cluster_nodes set stopped_at = ${node.now} where name = ${node.name} and instance = ${node.instance}
    `.execute(db);
  },

  /**
   * The fence of a write: true when the device's lease is still `name`'s at `epoch`. The row
   * stays share-locked until the caller's transaction ends: a takeover waits for it, or it
   * waits for the takeover and then finds the lease gone.
   */
  fence: async (db: Db, p: { deviceId: number; name: string; epoch: number }): Promise<boolean> => {
    const { rows } = await sql`
      select 1 as held from device_leases
      where device_id = ${p.deviceId} and node = ${p.name} and epoch = ${p.epoch}
      for share
    `.execute(db);
    return rows.length === 1;
  },

  /**
   * The fence of many writes in one statement: the devices whose lease is still `name`'s at the
   * given epoch (one epoch per device). Those rows stay share-locked until the caller's
   * transaction ends, taken in device order so two such fences cannot deadlock each other.
   */
  fenceAll: async (
    db: Db,
    p: { deviceIds: number[]; epochs: number[]; name: string },
  ): Promise<Array<{ deviceId: number; epoch: number }>> => {
    const { rows } = await sql<{ device_id: unknown; epoch: unknown }>`
      select l.device_id, l.epoch from device_leases l
      join unnest(${p.deviceIds}::bigint[], ${p.epochs}::bigint[]) as w(device_id, epoch)
        on l.device_id = w.device_id and l.epoch = w.epoch
      where l.node = ${p.name}
      order by l.device_id
      for share of l
    `.execute(db);
    return rows.map((row) => ({ deviceId: Number(row.device_id), epoch: Number(row.epoch) }));
  },

  placement: async (db: Db, deviceId: number): Promise<Placement | null> => {
    const { rows } = await sql<{
      node: string | null;
      epoch: unknown;
      url: string | null;
      heartbeat_at: unknown;
      stopped_at: unknown;
    }>`
      select l.node, l.epoch, c.url, c.heartbeat_at, c.stopped_at
      from device_leases l left join cluster_nodes c on c.name = l.node
      where l.device_id = ${deviceId}
    `.execute(db);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      node: row.node,
      epoch: n(row.epoch),
      url: row.url,
      heartbeatAt: row.heartbeat_at === null ? null : n(row.heartbeat_at),
      stoppedAt: row.stopped_at === null ? null : n(row.stopped_at),
    };
  },

  /** Every node with its lease and connection counts (the CLI, metrics, device `server` status). */
  nodes: async (db: Db): Promise<NodeRow[]> => {
    const { rows } = await sql<{
      name: string;
      url: string;
      started_at: unknown;
      heartbeat_at: unknown;
      stopped_at: unknown;
      devices: unknown;
      connected: unknown;
    }>`
      select c.name, c.url, c.started_at, c.heartbeat_at, c.stopped_at,
        (select count(*) from device_leases l where l.node = c.name) as devices,
        (select count(*) from device_leases l join devices d on d.id = l.device_id
          where l.node = c.name and d.connected = 1 and d.server_name = c.name) as connected
      from cluster_nodes c order by c.name
    `.execute(db);
    return rows.map((r) => ({
      name: r.name,
      url: r.url,
      startedAt: n(r.started_at),
      heartbeatAt: n(r.heartbeat_at),
      stoppedAt: r.stopped_at === null ? null : n(r.stopped_at),
      devices: n(r.devices),
      connected: n(r.connected),
    }));
  },

  /** Whether the device needs a connection now (paired, active, not deleted). */
  isWanted: async (db: Db, deviceId: number): Promise<boolean> => {
    const { rows } = await sql`select 1 as wanted from devices d where d.id = ${deviceId} and ${WANTED}`.execute(db);
    return rows.length === 1;
  },

  /** The device that holds a network session, if any (network-state writes are fenced by its lease). */
  deviceOfSession: async (db: Db, session: string): Promise<number | null> => {
    const { rows } = await sql<{ id: unknown }>`select id from devices where network_session = ${session}`.execute(db);
    return rows.length === 0 ? null : n(rows[0]!.id);
  },
};

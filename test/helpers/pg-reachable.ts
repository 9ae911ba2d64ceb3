// Whether a PostgreSQL server at a URL takes a connection and answers a query
// within the given time; used to find the shared server before the suite and to
// wait for a test's own cluster to come up.
import pg from 'pg';

export async function takesConnections(url: string, timeoutMs: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A server that goes away mid-check reports on the client; the check answers false instead.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

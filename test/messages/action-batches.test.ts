// Message actions written in batches (src/messages/action-batches.ts): on SQLite jobs submitted in one turn of the
// event loop share one transaction, on PostgreSQL each has its own; on both, one refused with an ApiError keeps none
// of its writes and the others commit, and an error that is not a refusal fails its own job only.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { ActionBatches } from '../../src/messages/action-batches.js';
import { Committer } from '../../src/store/batcher.js';
import { onPostgres } from '../../src/store/dialect.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('action batches', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  const claim = (key: string) =>
    gw.app.store.db
      .insertInto('idempotency_keys')
      .values({ account_id: 1, key, request_hash: 'h', response: '', created_at: Date.now() })
      .execute();
  const keys = async (prefix: string) =>
    (
      await gw.app.store.db
        .selectFrom('idempotency_keys')
        .select('key')
        .where('key', 'like', `${prefix}%`)
        .orderBy('key')
        .execute()
    ).map((row) => row.key);

  it('one commit for jobs of one turn on SQLite; a refused job keeps nothing, its neighbours commit', async () => {
    const transaction = vi.spyOn(gw.app.store.db, 'transaction');
    const batches = new ActionBatches(new Committer(gw.app.store.db), gw.app.store.db);
    const outcomes = await Promise.allSettled([
      batches.run(async (trx) => {
        await trx
          .insertInto('idempotency_keys')
          .values({ account_id: 1, key: 'one-a', request_hash: 'h', response: '', created_at: Date.now() })
          .execute();
        return 'a';
      }),
      batches.run(async (trx) => {
        await trx
          .insertInto('idempotency_keys')
          .values({ account_id: 1, key: 'one-b', request_hash: 'h', response: '', created_at: Date.now() })
          .execute();
        throw new ApiError('MESSAGE_NOT_EDITABLE', { error: 'refused after a write' });
      }),
      batches.run(async (trx) => {
        await trx
          .insertInto('idempotency_keys')
          .values({ account_id: 1, key: 'one-c', request_hash: 'h', response: '', created_at: Date.now() })
          .execute();
        return 'c';
      }),
    ]);
    expect(transaction).toHaveBeenCalledTimes(onPostgres(gw.app.store.db) ? 3 : 1);
    transaction.mockRestore();
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: 'a' });
    expect(outcomes[1]!.status).toBe('rejected');
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(ApiError);
    expect(outcomes[2]).toEqual({ status: 'fulfilled', value: 'c' });
    expect(await keys('one-')).toEqual(['one-a', 'one-c']);
  });

  it('an error that is no refusal fails its own job only: the others are run again alone and commit', async () => {
    await claim('two-taken');
    const batches = new ActionBatches(new Committer(gw.app.store.db), gw.app.store.db);
    const write = (key: string) => () =>
      batches.run(async (trx) => {
        // 'two-taken' exists: this insert breaks the unique key (a store error, not an ApiError).
        await trx
          .insertInto('idempotency_keys')
          .values({ account_id: 1, key, request_hash: 'h', response: '', created_at: Date.now() })
          .execute();
        return key;
      });
    const outcomes = await Promise.allSettled([write('two-a')(), write('two-taken')(), write('two-b')()]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).not.toBeInstanceOf(ApiError);
    expect(await keys('two-')).toEqual(['two-a', 'two-b', 'two-taken']);
  });
});

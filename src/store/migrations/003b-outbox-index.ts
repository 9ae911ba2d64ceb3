/**
 * The outbox index holds only `pending` messages: a message leaves it once,
 * when it is sent or fails, and its later changes (delivered, read) touch no
 * index at all. Cheaper writes, and a smaller index to scan for the queue.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('messages_outbox').execute();
  await db.schema
    .createIndex('messages_pending')
    .on('messages')
    .columns(['device_id', 'seq'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
}

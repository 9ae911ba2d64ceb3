/**
 * Finding the message an action names (actions.ts), on the path of every reaction, edit, delete and mark read.
 *
 * Owns: gathering the look-ups of one turn of the event loop into one statement (actions parsed together ask
 * together: one round trip for all, as the device look-ups of sends do, devices/directory.ts).
 * Must never: cache anything, decide on what it read (only whose message it is and which device holds it: the
 * action's own transaction reads the whole row again and decides on it as the store has it then), or answer a
 * message of another account or a queue row of an action.
 */
import DataLoader from 'dataloader';
import type { Db } from '../store/schema.js';
import { messagesRepository, type MessageOwner } from './repository.js';

interface Lookup {
  readonly accountId: number;
  readonly id: string;
}

export class MessageLookups {
  private readonly lookups: DataLoader<Lookup, MessageOwner | undefined, string>;

  constructor(db: Db) {
    this.lookups = new DataLoader(
      async (asked: readonly Lookup[]) => {
        const found = await messagesRepository.ownersOf(db, [...new Set(asked.map((lookup) => lookup.id))]);
        return asked.map(({ accountId, id }) => {
          const row = found.get(id);
          return row !== undefined && row.account_id === accountId ? row : undefined;
        });
      },
      { cache: false, maxBatchSize: 500, batchScheduleFn: (run) => setImmediate(run) },
    );
  }

  /** Whose the account's message with this id is (undefined: none, as messagesRepository.find answers it). */
  find(accountId: number, id: string): Promise<MessageOwner | undefined> {
    return this.lookups.load({ accountId, id });
  }
}

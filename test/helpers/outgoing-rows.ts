/**
 * A device of its own and outgoing `pending` text messages written straight into the store through the messages
 * repository, for tests of status changes that name their messages' fields (created and due at 1 unless given).
 * Not a test file itself.
 */
import { messagesRepository, type MessageRow } from '../../src/messages/repository.js';
import type { TestGateway } from './gateway.js';

export interface OutgoingRows {
  readonly deviceId: number;
  readonly accountId: number;
  /** Writes one message (ids `<prefix>-00001`, `-00002`, ...) and answers its id. */
  insert(fields?: Partial<MessageRow>): Promise<string>;
}

/** A new device named `prefix`, whose messages go from `phone` to `receiver`. */
export async function outgoingRows(gw: TestGateway, prefix: string, phone: string, receiver: string) {
  const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: prefix });
  const deviceId = created.body.data.id as number;
  const device = await gw.app.store.db
    .selectFrom('devices')
    .select('account_id')
    .where('id', '=', deviceId)
    .executeTakeFirstOrThrow();
  const accountId = Number(device.account_id);
  let n = 0;
  const rows: OutgoingRows = {
    deviceId,
    accountId,
    async insert(fields = {}) {
      const id = `${prefix}-${String(++n).padStart(5, '0')}`;
      await messagesRepository.insert(gw.app.store.db, {
        id,
        account_id: accountId,
        device_id: deviceId,
        direction: 'outgoing',
        type: 'chat',
        message: 'hi',
        params: JSON.stringify({ text: 'hi' }),
        device_phone: phone,
        receiver,
        sender: phone,
        file_url: null,
        simulate_typing: 0,
        status: 'pending',
        failed_reason: null,
        attempts: 0,
        next_attempt_at: 1,
        created_at: 1,
        sent_at: null,
        delivered_at: null,
        read_at: null,
        failed_at: null,
        rendered_as: null,
        ...fields,
      });
      return id;
    },
  };
  return rows;
}

/**
 * Networks kept per device (docs/networks-per-device.md).
 *
 * - `devices.network`: the network a paired device was paired on, `sandbox`
 *   or `whatsapp`; null while it is not paired (its next pairing goes to its
 *   account's network). Set when it pairs, cleared when it is logged out.
 *
 * Devices paired before this migration get theirs from their stored session,
 * whose form each network chose (`sbx1.` the sandbox's, `wa1.` WhatsApp's);
 * a session of neither form stays null and goes where its account's devices go.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('devices').addColumn('network', 'text').execute();
  await sql`update devices set network = 'sandbox' where network_session like 'sbx1.%'`.execute(db);
  await sql`update devices set network = 'whatsapp' where network_session like 'wa1.%'`.execute(db);
}

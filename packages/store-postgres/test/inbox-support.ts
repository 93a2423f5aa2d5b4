import { adminPool } from '@signalyard/test-utils/postgres';
import { inboxNames } from '../src/postgres-inbox-names.js';
import { parseTableName, type TableName } from '../src/postgres-table-name.js';

/** Drops every object of the inbox whose entries table is `table` (`name` or `schema.name`). */
export async function dropInbox(table: string): Promise<void> {
  const n = inboxNames(parseTableName(table) as TableName);
  const pool = adminPool();
  const relations = [n.entries, n.keys, n.dedupe, n.outcomes, n.dead, n.events, n.counters];
  await pool.query(`DROP TABLE IF EXISTS ${relations.map((r) => r.sql).join(', ')}`);
  await pool.query(`DROP SEQUENCE IF EXISTS ${n.order.sql}`);
  await pool.query(`DROP FUNCTION IF EXISTS ${n.accept.sql}, ${n.acceptMany.sql}`);
}

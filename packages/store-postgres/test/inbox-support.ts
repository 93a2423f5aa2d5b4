import { adminPool } from '@signalyard/test-utils/postgres';

const SUFFIXES = ['', '_keys', '_dedupe', '_outcomes', '_dead', '_events', '_counters'];

/** Drops every object of the inbox whose entries table is `table` (a plain name, as the tests use). */
export async function dropInbox(table: string): Promise<void> {
  const pool = adminPool();
  await pool.query(`DROP TABLE IF EXISTS ${SUFFIXES.map((s) => `"${table}${s}"`).join(', ')}`);
  await pool.query(`DROP SEQUENCE IF EXISTS "${table}_order"`);
  await pool.query(`DROP FUNCTION IF EXISTS "${table}_accept"`);
}

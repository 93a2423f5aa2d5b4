import { errorText } from '@signalyard/core/internal';
import type { Pool, PoolClient } from 'pg';
import { PostgresStoreError } from './errors/postgres-store-error.js';
import type { TableName } from './postgres-table-name.js';

/** The columns this store reads and writes, with their types as `format_type` names them. */
const COLUMNS: readonly (readonly [string, string])[] = [
  ['key', 'text'],
  ['version', 'bigint'],
  ['data', 'text'],
  ['updated_at', 'timestamp with time zone'],
];

/**
 * The table. `key` sorts bytewise (`COLLATE "C"`) so that `list(prefix)` is a range scan of the
 * primary-key index; `data` is `text`, not `jsonb` (jsonb refuses `\u0000` and lone surrogates,
 * which JSON.stringify writes as escapes, and would reorder keys and drop duplicates).
 */
function createTable(table: TableName): string {
  return `CREATE TABLE IF NOT EXISTS ${table.sql} (
  key text COLLATE "C" NOT NULL PRIMARY KEY,
  version bigint NOT NULL CHECK (version > 0),
  data text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
)`;
}

/**
 * Creates the checkpoint table unless it exists, then checks that it has this store's shape.
 * Many processes may migrate at once: a transaction-scoped advisory lock per table name makes
 * them take turns (a bare `CREATE TABLE IF NOT EXISTS` can fail when two run concurrently).
 * @throws PostgresStoreError `POSTGRES_MIGRATE_FAILED`.
 * @internal
 */
export async function migrateTable(pool: Pool, table: TableName): Promise<void> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw migrateFailed(table, 'cannot connect', error);
  }
  let columns: string[];
  let failed = false;
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`signalyard.migrate:${table.name}`]);
      await client.query(createTable(table));
      const found = await client.query<[string, string]>({
        text: `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod)
                 FROM pg_attribute a
                WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
                ORDER BY a.attnum`,
        values: [table.sql],
        rowMode: 'array',
      });
      await client.query('COMMIT');
      columns = found.rows.map(([name, type]) => `${name} ${type}`);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } catch (error) {
    failed = true;
    throw migrateFailed(table, 'cannot create or check the table', error);
  } finally {
    // After a failure the connection's state is unknown: it is closed, not given back to others.
    client.release(failed);
  }
  const expected = COLUMNS.map(([name, type]) => `${name} ${type}`);
  if (columns.length !== expected.length || expected.some((c, i) => columns[i] !== c)) {
    throw new PostgresStoreError({
      code: 'POSTGRES_MIGRATE_FAILED',
      table: table.name,
      message:
        `Table ${table.name} exists with columns ${JSON.stringify(columns)}, expected ${JSON.stringify(expected)}: ` +
        'it belongs to something else; give the store a table of its own (the table option)',
    });
  }
}

function migrateFailed(table: TableName, what: string, error: unknown): PostgresStoreError {
  const pgCode = pgCodeOf(error);
  return new PostgresStoreError({
    code: 'POSTGRES_MIGRATE_FAILED',
    table: table.name,
    message: `Cannot migrate checkpoint table ${table.name}: ${what}: ${errorText(error)}`,
    ...(pgCode !== undefined && { pgCode }),
    cause: error,
  });
}

/** The `code` of an error from `pg` (a SQLSTATE or a socket code), if it has one. @internal */
export function pgCodeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

import { errorText } from '@signalyard/core/internal';
import type { Pool, PoolClient } from 'pg';
import { PostgresStoreError } from './errors/postgres-store-error.js';
import { migrateUnderLock } from './postgres-migrate-lock.js';
import type { TableName } from './postgres-table-name.js';

/**
 * The schema version this release writes and reads. Version 1 (the first release): the
 * checkpoint table. Version 2 adds the history table `<table>_history`. `migrate()` records the
 * version as the checkpoint table's comment (`@signalyard/store-postgres schema 2`) and refuses a
 * table marked with a higher one.
 *
 * @example
 * ```ts
 * // What a table says about itself (psql): \dt+ signalyard_checkpoints  → "@signalyard/store-postgres schema 2"
 * console.log(`this release writes schema ${POSTGRES_SCHEMA_VERSION}`);
 * ```
 */
export const POSTGRES_SCHEMA_VERSION = 2;

const SCHEMA_MARK = '@signalyard/store-postgres schema ';
const SCHEMA_MARK_PATTERN = /^@signalyard\/store-postgres schema (\d+)$/;

/** The columns this store reads and writes (both tables), with their types as `format_type` names them. */
const COLUMNS: readonly (readonly [string, string])[] = [
  ['key', 'text'],
  ['version', 'bigint'],
  ['data', 'text'],
  ['updated_at', 'timestamp with time zone'],
];

/**
 * The table (schema version 1). `key` sorts bytewise (`COLLATE "C"`) so that `list(prefix)` is a
 * range scan of the primary-key index; `data` is `text`, not `jsonb` (jsonb refuses `\u0000` and
 * lone surrogates, which JSON.stringify writes as escapes, and would reorder keys and drop duplicates).
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
 * The history table (schema version 2): the versions kept before the current one. Its rows
 * belong to their key's row in the checkpoint table: deleting a checkpoint (by any release of
 * the store, or by hand) deletes its history with it.
 */
function createHistoryTable(table: TableName, history: TableName): string {
  return `CREATE TABLE IF NOT EXISTS ${history.sql} (
  key text COLLATE "C" NOT NULL REFERENCES ${table.sql} (key) ON DELETE CASCADE,
  version bigint NOT NULL CHECK (version > 0),
  data text NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (key, version)
)`;
}

/**
 * Brings the tables to this release's schema: creates what is missing (both tables on a new
 * database; the history table on one the previous release created), marks the schema version,
 * and checks that existing tables have this store's shape. A table marked with a newer schema is
 * refused. Everything happens in one transaction under a transaction-scoped advisory lock per
 * table name, so processes migrating at once take turns and a failure changes nothing; once
 * migrated, a call only reads.
 * @throws PostgresStoreError `POSTGRES_MIGRATE_FAILED`, `POSTGRES_SCHEMA_UNSUPPORTED`.
 * @internal
 */
export async function migrateTable(pool: Pool, table: TableName, history: TableName): Promise<void> {
  await migrateUnderLock(
    pool,
    `signalyard.migrate:${table.name}`,
    (client) => migrateLocked(client, table, history),
    (what, error) => migrateFailed(table, what, error),
  );
}

/** The migration's steps, inside its transaction and holding its lock. */
async function migrateLocked(client: PoolClient, table: TableName, history: TableName): Promise<void> {
  const found = await client.query<[string | null, string | null, string | null]>({
    text: `SELECT to_regclass($1)::text, to_regclass($2)::text, obj_description(to_regclass($1), 'pg_class')`,
    values: [table.sql, history.sql],
    rowMode: 'array',
  });
  const [tableFound, historyFound, comment] = found.rows[0] ?? [null, null, null];
  const marked = comment === null ? undefined : SCHEMA_MARK_PATTERN.exec(comment);
  const version = marked == null ? undefined : Number(marked[1]);
  if (version !== undefined && version > POSTGRES_SCHEMA_VERSION) {
    throw new PostgresStoreError({
      code: 'POSTGRES_SCHEMA_UNSUPPORTED',
      table: table.name,
      message:
        `Table ${table.name} has schema version ${version}, expected ${POSTGRES_SCHEMA_VERSION} or lower: ` +
        'it was migrated by a newer @signalyard/store-postgres; upgrade to use it',
    });
  }
  if (tableFound === null) await client.query(createTable(table));
  await checkColumns(client, table, table);
  if (historyFound === null) await client.query(createHistoryTable(table, history));
  await checkColumns(client, history, table);
  if (version !== POSTGRES_SCHEMA_VERSION) {
    await client.query(`COMMENT ON TABLE ${table.sql} IS '${SCHEMA_MARK}${POSTGRES_SCHEMA_VERSION}'`);
  }
}

/** Refuses a table whose columns are not this store's (it belongs to something else). */
async function checkColumns(client: PoolClient, table: TableName, configured: TableName): Promise<void> {
  const found = await client.query<[string, string]>({
    text: `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod)
             FROM pg_attribute a
            WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY a.attnum`,
    values: [table.sql],
    rowMode: 'array',
  });
  const columns = found.rows.map(([name, type]) => `${name} ${type}`);
  const expected = COLUMNS.map(([name, type]) => `${name} ${type}`);
  if (columns.length !== expected.length || expected.some((c, i) => columns[i] !== c)) {
    throw new PostgresStoreError({
      code: 'POSTGRES_MIGRATE_FAILED',
      table: configured.name,
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

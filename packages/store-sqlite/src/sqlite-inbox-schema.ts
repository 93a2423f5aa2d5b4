import { existsSync } from 'node:fs';
import Database from 'libsql';
import { SqliteSchemaVersionError } from './errors/sqlite-schema-version-error.js';
import { SqliteStoreError } from './errors/sqlite-store-error.js';
import type { ResolvedSqliteInboxOptions } from './sqlite-inbox-options.js';
import { openFailed } from './sqlite-inbox-rows.js';

/**
 * The schema version of the inbox tables this release writes and reads, kept in the file's
 * `inbox_meta` table (the checkpoint tables keep theirs in `PRAGMA user_version`, so the two
 * evolve apart in one file). A file whose inbox tables have a higher version is refused with
 * `SqliteSchemaVersionError`; one without them gets them created when a `SqliteInbox` opens it.
 *
 * Version 1: `inbox_meta`, `inbox_keys`, `inbox_entries`, `inbox_dedupe`, `inbox_outcomes`,
 * `inbox_dead`, `inbox_events`, `inbox_notices` (see the scaling-out guide's layout section).
 * Version 2: triggers on `inbox_entries` keep the pending counts (a key's `last_seq`, `pending`
 * and `waiting_since` in `inbox_keys`, the inbox's `pending` in `inbox_meta`) as entries are
 * inserted and deleted, in the statement that does it; a version 1 file gets them in place (its
 * counts are kept as they are). Stop the processes of an earlier release before one of this
 * release opens the file: theirs would count an entry twice.
 *
 * @example
 * ```ts
 * // What a file says about itself (any SQLite client): SELECT value FROM inbox_meta WHERE name = 'schema';  → 1
 * console.log(`this release writes inbox schema ${SQLITE_INBOX_SCHEMA_VERSION}`);
 * ```
 */
export const SQLITE_INBOX_SCHEMA_VERSION = 2;

/** The tables of schema version 1, as created. */
const SCHEMA_1 = [
  `CREATE TABLE inbox_meta (
  name TEXT PRIMARY KEY NOT NULL,
  value INTEGER NOT NULL
)`,
  `CREATE TABLE inbox_keys (
  key TEXT PRIMARY KEY NOT NULL,
  last_seq INTEGER NOT NULL,
  pending INTEGER NOT NULL,
  waiting_since INTEGER,
  lease_worker TEXT,
  lease_token TEXT,
  lease_expires INTEGER,
  lease_ms INTEGER
)`,
  'CREATE INDEX inbox_keys_waiting ON inbox_keys (waiting_since) WHERE pending > 0',
  `CREATE TABLE inbox_entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  receipt_id TEXT NOT NULL UNIQUE,
  session_key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  agent_id TEXT,
  kind TEXT NOT NULL,
  signal TEXT NOT NULL,
  control TEXT,
  accepted_at TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  delivery_token TEXT,
  origin TEXT NOT NULL,
  UNIQUE (session_key, seq)
)`,
  `CREATE TABLE inbox_dedupe (
  id TEXT PRIMARY KEY NOT NULL,
  receipt_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  accepted_at TEXT NOT NULL,
  expires INTEGER NOT NULL
)`,
  'CREATE INDEX inbox_dedupe_expires ON inbox_dedupe (expires)',
  `CREATE TABLE inbox_outcomes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  receipt_id TEXT NOT NULL UNIQUE,
  outcome TEXT NOT NULL,
  expires INTEGER NOT NULL
)`,
  'CREATE INDEX inbox_outcomes_expires ON inbox_outcomes (expires)',
  `CREATE TABLE inbox_dead (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  receipt_id TEXT NOT NULL UNIQUE,
  session_key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  agent_id TEXT,
  signal TEXT NOT NULL,
  control TEXT,
  accepted_at TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  expires INTEGER NOT NULL
)`,
  `CREATE TABLE inbox_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  receipt_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  event TEXT NOT NULL
)`,
  'CREATE INDEX inbox_events_receipt ON inbox_events (receipt_id, id)',
  `CREATE TABLE inbox_notices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_key TEXT NOT NULL,
  what TEXT NOT NULL,
  at INTEGER NOT NULL,
  origin TEXT NOT NULL
)`,
  "INSERT INTO inbox_meta (name, value) VALUES ('schema', 1), ('pending', 0)",
];

/**
 * Version 2: the pending counts kept by triggers. An entry inserted raises its key's `pending`
 * (creating the key's row), sets its `last_seq` to the entry's `seq` (allocated as `last_seq + 1`
 * by the insert) and its `waiting_since` to the entry's id when the key had none waiting, and
 * raises the inbox's `pending`; an entry deleted lowers both (clearing `waiting_since` with the
 * key's last one).
 */
const SCHEMA_2 = [
  `CREATE TRIGGER inbox_entries_counted AFTER INSERT ON inbox_entries BEGIN
  INSERT INTO inbox_keys (key, last_seq, pending, waiting_since) VALUES (NEW.session_key, NEW.seq, 1, NEW.id)
    ON CONFLICT (key) DO UPDATE SET last_seq = excluded.last_seq, pending = pending + 1,
    waiting_since = CASE WHEN pending = 0 OR waiting_since IS NULL THEN excluded.waiting_since ELSE waiting_since END;
  UPDATE inbox_meta SET value = value + 1 WHERE name = 'pending';
END`,
  `CREATE TRIGGER inbox_entries_uncounted AFTER DELETE ON inbox_entries BEGIN
  UPDATE inbox_keys SET pending = pending - 1, waiting_since = CASE WHEN pending = 1 THEN NULL ELSE waiting_since END
    WHERE key = OLD.session_key;
  UPDATE inbox_meta SET value = value - 1 WHERE name = 'pending';
END`,
];

/** What brings the inbox tables from version `i` to version `i + 1`. */
const MIGRATIONS: readonly (readonly string[])[] = [SCHEMA_1, SCHEMA_2];

/** The columns of the entries table, to refuse a foreign table under that name. */
const ENTRY_COLUMNS = [
  'id',
  'receipt_id',
  'session_key',
  'seq',
  'agent_id',
  'kind',
  'signal',
  'control',
  'accepted_at',
  'attempts',
  'delivery_token',
  'origin',
];

/**
 * Sets the connection up (busy timeout, WAL, synchronous) and makes sure the file holds the inbox
 * tables of this release: creates them where missing, migrates older ones forward (one
 * transaction under the write lock: processes opening the file at once take turns), refuses a
 * newer version before changing anything.
 * @throws SqliteSchemaVersionError for newer inbox tables; SqliteStoreError `SQLITE_OPEN_FAILED`
 * for tables of another shape under the inbox's names. SQLite's own errors propagate.
 * @internal
 */
export function prepareInboxSchema(db: Database.Database, options: ResolvedSqliteInboxOptions): void {
  db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
  const newer = (found: number): SqliteSchemaVersionError =>
    new SqliteSchemaVersionError({
      path: options.path,
      found,
      supported: SQLITE_INBOX_SCHEMA_VERSION,
      subject: 'Inbox in database',
    });
  let found = readVersion(db);
  if (found > SQLITE_INBOX_SCHEMA_VERSION) throw newer(found);
  // ':memory:' databases stay in journal_mode=memory: there is no file for a WAL.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA synchronous = ${options.synchronous.toUpperCase()}`);
  if (found < SQLITE_INBOX_SCHEMA_VERSION) {
    db.exec('BEGIN IMMEDIATE');
    try {
      found = readVersion(db);
      if (found < SQLITE_INBOX_SCHEMA_VERSION) {
        for (let version = found; version < SQLITE_INBOX_SCHEMA_VERSION; version++) {
          for (const statement of MIGRATIONS[version] as readonly string[]) db.exec(statement);
        }
        db.exec(`UPDATE inbox_meta SET value = ${SQLITE_INBOX_SCHEMA_VERSION} WHERE name = 'schema'`);
      }
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
    if (found > SQLITE_INBOX_SCHEMA_VERSION) throw newer(found);
  }
  checkEntries(db, options.path);
}

/**
 * Whether the existing SQLite file at `path` holds inbox tables (any schema version), read
 * without changing the file: a missing path or `:memory:` is `false` (nothing is created), the
 * connection is `query_only` and is closed before returning.
 * @throws SqliteStoreError `SQLITE_OPEN_FAILED` for a path that cannot be read as a database (a
 * directory, a file that is not SQLite).
 * @internal
 */
export function hasInboxTables(path: string, busyTimeoutMs: number): boolean {
  if (path === ':memory:' || !existsSync(path)) return false;
  let db: Database.Database | undefined;
  try {
    db = new Database(path);
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    db.exec('PRAGMA query_only = 1');
    return readVersion(db) > 0;
  } catch (error) {
    throw openFailed(path, error);
  } finally {
    try {
      db?.close();
    } catch {
      // the answer (or the error) is what matters
    }
  }
}

/** The inbox schema version in the file: 0 when it has no inbox tables yet. */
function readVersion(db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'inbox_meta'").get();
  if (table === undefined) return 0;
  const row = db.prepare("SELECT value FROM inbox_meta WHERE name = 'schema'").get() as { value?: unknown } | undefined;
  return typeof row?.value === 'number' ? row.value : 0;
}

function checkEntries(db: Database.Database, path: string): void {
  const columns = db
    .prepare('PRAGMA table_info(inbox_entries)')
    .all()
    .map((row) => (row as { name?: unknown }).name);
  if (columns.length !== ENTRY_COLUMNS.length || ENTRY_COLUMNS.some((c, i) => columns[i] !== c)) {
    throw new SqliteStoreError({
      code: 'SQLITE_OPEN_FAILED',
      path,
      message:
        `Database ${JSON.stringify(path)} has an "inbox_entries" table with columns ${JSON.stringify(columns)}, ` +
        `expected ${JSON.stringify(ENTRY_COLUMNS)}: the table belongs to something else; give the inbox a file of its own`,
    });
  }
}

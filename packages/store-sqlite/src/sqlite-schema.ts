import type Database from 'libsql';
import { SqliteSchemaVersionError } from './errors/sqlite-schema-version-error.js';
import { SqliteStoreError } from './errors/sqlite-store-error.js';
import type { ResolvedSqliteOptions } from './sqlite-checkpoint-store-options.js';

/**
 * The schema version this release writes and reads, kept in the file's `PRAGMA user_version`.
 * A file with a higher version is refused with {@link SqliteSchemaVersionError}; version 0 (a
 * new file, or one that never held checkpoints) gets the tables created; an older version is
 * migrated forward when the store opens it.
 *
 * Version 1: the `checkpoints` table. Version 2 adds `checkpoint_history` (the versions kept
 * before the current one). Version 3 lays the history out as a ring of `keepVersions` slots per
 * key, overwritten in place (`checkpoint_history` gains a `slot` column and is keyed by
 * `(key, slot)`; `checkpoints` gains `history_slots`, the ring size its key's history is laid
 * out for), so a save rewrites one history row instead of inserting one, deleting one and
 * updating their index.
 *
 * @example
 * ```ts
 * // What a file says about itself (any SQLite client): PRAGMA user_version;  → 3
 * if (fileVersion > SQLITE_SCHEMA_VERSION) console.error('written by a newer @signalyard/store-sqlite');
 * ```
 */
export const SQLITE_SCHEMA_VERSION = 3;

/** The table of current versions. @internal */
export const TABLE = 'checkpoints';
/** The table of the versions kept before the current one. @internal */
export const HISTORY_TABLE = 'checkpoint_history';

const V1_COLUMNS = ['key', 'version', 'data', 'updated_at'];
const COLUMNS = [...V1_COLUMNS, 'history_slots'];
const HISTORY_COLUMNS = ['key', 'slot', 'version', 'data', 'updated_at'];

// Version 1, as the first release created it.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${TABLE} (
  key TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL,
  data TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`;

// Version 2, as the previous release created it.
const CREATE_V2_HISTORY_TABLE = `CREATE TABLE IF NOT EXISTS ${HISTORY_TABLE} (
  key TEXT NOT NULL,
  version INTEGER NOT NULL,
  data TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (key, version)
)`;

/**
 * Version 3: the history as a ring. A rowid table (its rows hold whole checkpoints, too big for a
 * WITHOUT ROWID b-tree) whose primary-key index never changes once a slot exists: a save updates
 * the slot's row in place. The rows of version 2 keep their data under distinct negative slots;
 * `history_slots` 0 makes the first save of each key lay them out as a ring.
 */
function migrateToRing(db: Database.Database, path: string): void {
  // Tables of another shape are reported before anything changes.
  checkColumns(db, path, TABLE, V1_COLUMNS);
  checkColumns(db, path, HISTORY_TABLE, V1_COLUMNS);
  db.exec(`ALTER TABLE ${TABLE} ADD COLUMN history_slots INTEGER NOT NULL DEFAULT 0`);
  db.exec(`CREATE TABLE ${HISTORY_TABLE}_v3 (
  key TEXT NOT NULL,
  slot INTEGER NOT NULL,
  version INTEGER NOT NULL,
  data TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (key, slot)
)`);
  db.exec(
    `INSERT INTO ${HISTORY_TABLE}_v3 (key, slot, version, data, updated_at) ` +
      `SELECT key, -version, version, data, updated_at FROM ${HISTORY_TABLE}`,
  );
  db.exec(`DROP TABLE ${HISTORY_TABLE}`);
  db.exec(`ALTER TABLE ${HISTORY_TABLE}_v3 RENAME TO ${HISTORY_TABLE}`);
}

/** What brings a file from version `i` to version `i + 1`. */
const MIGRATIONS: readonly ((db: Database.Database, path: string) => void)[] = [
  (db) => db.exec(CREATE_TABLE),
  (db) => db.exec(CREATE_V2_HISTORY_TABLE),
  migrateToRing,
];

/**
 * Sets the connection up (busy timeout, WAL, synchronous) and makes sure the file holds the
 * schema this release understands: creates it on a fresh file, migrates an older one forward
 * (in one transaction: a file is at one version or the next, never in between), refuses a newer one.
 * @throws SqliteSchemaVersionError for a newer schema; SqliteStoreError `SQLITE_OPEN_FAILED`
 * for a table of another shape. SQLite's own errors propagate (the caller wraps them).
 * @internal
 */
export function prepareSchema(db: Database.Database, options: ResolvedSqliteOptions): void {
  db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
  let found = readUserVersion(db);
  // Refuse a file this release does not understand before changing anything in it.
  if (found > SQLITE_SCHEMA_VERSION) {
    throw new SqliteSchemaVersionError({ path: options.path, found, supported: SQLITE_SCHEMA_VERSION });
  }
  if (found < 0) {
    throw new SqliteStoreError({
      code: 'SQLITE_OPEN_FAILED',
      path: options.path,
      message: `Checkpoint database ${JSON.stringify(options.path)} has user_version ${found}, expected 0 (a new file) to ${SQLITE_SCHEMA_VERSION}: the file belongs to something else; give the store a file of its own`,
    });
  }
  // ':memory:' databases stay in journal_mode=memory: there is no file for a WAL.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA synchronous = ${options.synchronous.toUpperCase()}`);
  if (found < SQLITE_SCHEMA_VERSION) {
    // Another process may be migrating at the same moment: decide under the write lock.
    db.exec('BEGIN IMMEDIATE');
    try {
      found = readUserVersion(db);
      if (found < SQLITE_SCHEMA_VERSION) {
        for (let version = Math.max(found, 0); version < SQLITE_SCHEMA_VERSION; version++) {
          (MIGRATIONS[version] as (db: Database.Database, path: string) => void)(db, options.path);
        }
        checkTables(db, options.path); // a table of another shape: leave the file as it was
        db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
      }
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
    if (found > SQLITE_SCHEMA_VERSION) {
      throw new SqliteSchemaVersionError({ path: options.path, found, supported: SQLITE_SCHEMA_VERSION });
    }
  }
  checkTables(db, options.path);
}

function checkTables(db: Database.Database, path: string): void {
  checkColumns(db, path, TABLE, COLUMNS);
  checkColumns(db, path, HISTORY_TABLE, HISTORY_COLUMNS);
}

function checkColumns(db: Database.Database, path: string, table: string, expected: readonly string[]): void {
  const columns = db
    .prepare(`PRAGMA table_info(${table})`)
    .all()
    .map((row) => (row as { name?: unknown }).name);
  if (columns.length !== expected.length || expected.some((c, i) => columns[i] !== c)) {
    throw new SqliteStoreError({
      code: 'SQLITE_OPEN_FAILED',
      path,
      message:
        `Checkpoint database ${JSON.stringify(path)} has a "${table}" table with columns ${JSON.stringify(columns)}, ` +
        `expected ${JSON.stringify(expected)}: the file belongs to something else; give the store a file of its own`,
    });
  }
}

function readUserVersion(db: Database.Database): number {
  const row = db.prepare('PRAGMA user_version').get() as { user_version?: unknown } | undefined;
  const version = row?.user_version;
  return typeof version === 'number' ? version : Number(version);
}

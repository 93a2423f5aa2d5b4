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
 * before the current one).
 *
 * @example
 * ```ts
 * // What a file says about itself (any SQLite client): PRAGMA user_version;  → 2
 * if (fileVersion > SQLITE_SCHEMA_VERSION) console.error('written by a newer @signalyard/store-sqlite');
 * ```
 */
export const SQLITE_SCHEMA_VERSION = 2;

/** The table of current versions. @internal */
export const TABLE = 'checkpoints';
/** The table of the versions kept before the current one. @internal */
export const HISTORY_TABLE = 'checkpoint_history';

const COLUMNS = ['key', 'version', 'data', 'updated_at'];

// Version 1, as the first release created it.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${TABLE} (
  key TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL,
  data TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`;

// Version 2. A rowid table: its rows hold whole checkpoints, too big for a WITHOUT ROWID b-tree.
const CREATE_HISTORY_TABLE = `CREATE TABLE IF NOT EXISTS ${HISTORY_TABLE} (
  key TEXT NOT NULL,
  version INTEGER NOT NULL,
  data TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (key, version)
)`;

/** What brings a file from version `i` to version `i + 1`. */
const MIGRATIONS: readonly string[] = [CREATE_TABLE, CREATE_HISTORY_TABLE];

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
          db.exec(MIGRATIONS[version] as string);
        }
        checkColumns(db, options.path); // a table of another shape: leave the file as it was
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
  checkColumns(db, options.path);
}

function checkColumns(db: Database.Database, path: string): void {
  for (const table of [TABLE, HISTORY_TABLE]) {
    const columns = db
      .prepare(`PRAGMA table_info(${table})`)
      .all()
      .map((row) => (row as { name?: unknown }).name);
    if (columns.length !== COLUMNS.length || COLUMNS.some((c, i) => columns[i] !== c)) {
      throw new SqliteStoreError({
        code: 'SQLITE_OPEN_FAILED',
        path,
        message:
          `Checkpoint database ${JSON.stringify(path)} has a "${table}" table with columns ${JSON.stringify(columns)}, ` +
          `expected ${JSON.stringify(COLUMNS)}: the file belongs to something else; give the store a file of its own`,
      });
    }
  }
}

function readUserVersion(db: Database.Database): number {
  const row = db.prepare('PRAGMA user_version').get() as { user_version?: unknown } | undefined;
  const version = row?.user_version;
  return typeof version === 'number' ? version : Number(version);
}

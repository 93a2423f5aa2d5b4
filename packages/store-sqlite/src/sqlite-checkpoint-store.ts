import {
  CheckpointConflictError,
  SignalyardError,
  describeValue,
  type Checkpoint,
  type CheckpointStore,
  type Clock,
} from '@signalyard/core';
import {
  assertCheckpointVersion,
  assertExpectedVersion,
  assertTextCheckpointKey,
  resolveHistoryOptions,
  keyPrefixRange,
  keysWithPrefix,
  isoAt,
  readClock,
  serializeCheckpointData,
  storeClosedError,
  checkpointFromRow,
  isStoredVersion,
  errorText,
} from '@signalyard/core/internal';
import type Database from 'libsql';
import { SqliteStoreError, type SqliteStoreErrorCode } from './errors/sqlite-store-error.js';
import { resolveSqliteOptions, type SqliteCheckpointStoreOptions } from './sqlite-checkpoint-store-options.js';
import { HISTORY_TABLE, TABLE, prepareSchema } from './sqlite-schema.js';
import { openSqliteConnection, type SqliteConnection } from './sqlite-connection.js';

type Statement = Database.Statement;

/** The prepared statements of one open connection. */
interface Statements {
  readonly load: Statement;
  readonly version: Statement;
  readonly insert: Statement;
  readonly update: Statement;
  readonly keepOld: Statement;
  readonly keepOldLaidOut: Statement;
  readonly slotsOf: Statement;
  readonly historyRows: Statement;
  readonly deleteRow: Statement;
  readonly moveRow: Statement;
  readonly clearHistory: Statement;
  readonly history: Statement;
  readonly loadVersion: Statement;
  readonly delete: Statement;
  readonly listFrom: Statement;
  readonly listRange: Statement;
}

const STORE_NAME = 'SqliteCheckpointStore';

/**
 * The kept versions of `:key`: the current row, and the history rows below it within the
 * `:keep` versions before it (rows another store left beyond that are not listed).
 */
/** The current row of `:key` at `:version`, into the slot `:slot` of its ring. */
const KEEP_OLD =
  `INSERT INTO ${HISTORY_TABLE} (key, slot, version, data, updated_at) ` +
  `SELECT key, :slot, version, data, updated_at FROM ${TABLE} WHERE key = :key AND version = :version`;
const KEEP_OLD_UPSERT =
  'ON CONFLICT (key, slot) DO UPDATE SET version = excluded.version, data = excluded.data, updated_at = excluded.updated_at';

const KEPT_VERSIONS = `SELECT version, data, updated_at FROM ${TABLE} WHERE key = :key
  UNION ALL
  SELECT h.version, h.data, h.updated_at FROM ${HISTORY_TABLE} h JOIN ${TABLE} c ON c.key = h.key
   WHERE h.key = :key AND h.version < c.version AND h.version >= c.version - :keep`;

/**
 * A durable `CheckpointStore` in one SQLite file (through `libsql`): sessions survive a
 * restart, and a process killed with `kill -9` loses at most the save it was making.
 *
 * Same semantics as core's `MemoryCheckpointStore` — it passes the same conformance suite:
 * what is kept is `JSON.stringify(data)` (values JSON cannot represent are refused with
 * `CHECKPOINT_DATA_INVALID` and nothing is written), and `save` is a compare-and-set (one
 * `UPDATE … WHERE key = ? AND version = ?`, or an `INSERT` for version 0, inside a
 * `BEGIN IMMEDIATE` transaction), so two writers — in one process or in several sharing the
 * file — never overwrite each other: the loser gets `CheckpointConflictError`.
 *
 * Each key keeps the `keepVersions` (default 20) versions before the current one: `history`
 * lists them newest first, `loadVersion` reads one. In the save's transaction the version it
 * replaces joins the history and those beyond `keepVersions` leave it, so there is never a
 * moment without the current version, nor a gap in the versions kept. `delete` removes the
 * key's whole history.
 *
 * The file is opened in WAL mode with `synchronous = NORMAL` (configurable), and holds two
 * tables, created on open: `checkpoints (key TEXT PRIMARY KEY, version INTEGER, data TEXT,
 * updated_at TEXT, history_slots INTEGER)` with the current versions and `checkpoint_history
 * (key, slot, version, data, updated_at)`, primary key `(key, slot)`, with the older ones: a ring
 * of `keepVersions` slots per key, where a save overwrites the slot of the version it evicts in
 * place. The schema version is kept in `PRAGMA user_version` (`SQLITE_SCHEMA_VERSION`); a file
 * written by an earlier release is migrated forward when opened, in one transaction (a schema 1
 * file's checkpoints start their history there; a schema 2 file keeps its kept versions). Give
 * the store a file of its own. `path: ':memory:'` gives a private in-memory database (for tests).
 *
 * Keys are non-empty strings of well-formed Unicode without NUL: SQLite text cannot hold a NUL
 * or a lone surrogate, so such keys are refused (`CHECKPOINT_KEY_INVALID`) rather than truncated
 * or merged with another key. (Session keys never contain them.)
 *
 * Saves and deletes join a group commit: those asked for before the next microtask — of every
 * session, and the writes of a `SqliteInbox` of this process on the same file, which shares the
 * store's connection — commit in one transaction, each in a savepoint of its own (a lost
 * compare-and-set undoes only itself), and each resolves once that transaction committed. The
 * statements run synchronously on the connection: keep checkpoints small enough that a save does
 * not stall the event loop.
 *
 * @throws ConfigError `CONFIG_INVALID` listing every bad option; SqliteSchemaVersionError
 * `SQLITE_SCHEMA_UNSUPPORTED` for a file written by a newer release; SqliteStoreError
 * `SQLITE_OPEN_FAILED` when the file cannot be opened or holds a foreign `checkpoints` or
 * `checkpoint_history` table.
 * @example
 * ```ts
 * import { createRunner } from 'signalyard';
 * import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
 *
 * const store = new SqliteCheckpointStore({ path: 'sessions.db' });
 * const runner = createRunner({ agents, store });
 * // ... serve; after a restart, a new runner on the same file continues every session.
 * await runner.close();
 * await store.close();   // the runner closes only stores it created
 * ```
 */
export class SqliteCheckpointStore implements CheckpointStore {
  /** The database file, as given (`':memory:'` for an in-memory store). */
  readonly path: string;
  #conn: SqliteConnection | undefined;
  readonly #s: Statements;
  readonly #keepVersions: number;
  readonly #clock: Clock;
  /** What SQLite's failure in a write becomes (`what`: "save checkpoint \"k\"", …). */
  readonly #failure = (what: string, error: unknown): unknown =>
    failure('SQLITE_OPERATION_FAILED', this.path, `Cannot ${what}`, error);

  constructor(options: SqliteCheckpointStoreOptions) {
    const resolved = resolveSqliteOptions(options);
    const path = resolved.path;
    this.path = path;
    this.#keepVersions = resolved.keepVersions;
    this.#clock = resolved.clock;
    let statements: Statements | undefined;
    try {
      this.#conn = openSqliteConnection(resolved, (db) => {
        prepareSchema(db, resolved);
        statements = prepareStatements(db);
      });
    } catch (error) {
      if (SignalyardError.isInstance(error)) throw error;
      throw failure('SQLITE_OPEN_FAILED', path, `Cannot open checkpoint database ${JSON.stringify(path)}`, error);
    }
    this.#s = statements as Statements;
  }

  /**
   * The checkpoint under `key` (a fresh copy), or `undefined`.
   * @throws SignalyardError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_STORE_CLOSED`;
   * SqliteStoreError `SQLITE_OPERATION_FAILED`, `SQLITE_DATA_CORRUPT`.
   */
  async load(key: string): Promise<Checkpoint | undefined> {
    this.#open();
    assertTextCheckpointKey(key, 'SQLite');
    let row: unknown;
    try {
      this.#connection().batch.flush(); // the writes asked for so far come first
      row = this.#s.load.get(key);
    } catch (error) {
      throw failure('SQLITE_OPERATION_FAILED', this.path, `Cannot load checkpoint ${JSON.stringify(key)}`, error);
    }
    return row === undefined ? undefined : this.#checkpoint(key, row);
  }

  /**
   * Compare-and-set save; see `CheckpointStore.save` (core). Returns `expectedVersion + 1`. The
   * version it replaces joins the key's history in the same transaction.
   * @throws CheckpointConflictError `CHECKPOINT_CONFLICT` when the stored version is not
   * `expectedVersion` (nothing written); SignalyardError `CHECKPOINT_DATA_INVALID`,
   * `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_VERSION_INVALID`, `CHECKPOINT_STORE_CLOSED`;
   * SqliteStoreError `SQLITE_OPERATION_FAILED` (nothing written); InvalidArgumentError `CLOCK_INVALID` when the
   * store's clock returns no time (nothing written).
   */
  async save(key: string, data: unknown, expectedVersion: number): Promise<number> {
    this.#open();
    assertTextCheckpointKey(key, 'SQLite');
    assertExpectedVersion(expectedVersion);
    const text = serializeCheckpointData(data, key);
    const at = isoAt(readClock(this.#clock));
    const s = this.#s;
    // In the connection's next group commit, in a savepoint of its own: a lost compare-and-set
    // throws there, so that whatever it did (a history laid out) is undone with it.
    return this.#connection().batch.run(
      `save checkpoint ${JSON.stringify(key)}`,
      () => {
        if (this.#write(key, text, at, expectedVersion)) return expectedVersion + 1;
        const stored = (s.version.get(key) as unknown[] | undefined)?.[0] ?? 0;
        if (stored !== 0 && !isStoredVersion(stored)) throw this.#corrupt(key, `version ${describeValue(stored)}`);
        throw new CheckpointConflictError({ key, expected: expectedVersion, actual: stored });
      },
      this.#failure,
    );
  }

  /**
   * The writes of one save, inside its transaction: the compare-and-set, and the history kept
   * with it (the replaced version joins it, versions beyond `keepVersions` leave it; a new key
   * starts with none). False when the compare-and-set lost (the caller rolls back).
   */
  #write(key: string, text: string, at: string, expectedVersion: number): boolean {
    const s = this.#s;
    const keep = this.#keepVersions;
    if (expectedVersion === 0) {
      if (s.insert.run(key, text, at, keep).changes !== 1) return false;
      s.clearHistory.run(key);
      return true;
    }
    if (keep === 0) {
      s.clearHistory.run(key);
    } else {
      const old = { key, version: expectedVersion, slot: expectedVersion % keep, keep };
      if (s.keepOld.run(old).changes !== 1) {
        // The compare-and-set lost, or the history is not laid out for this ring size (a store
        // with another keepVersions wrote it, or it came from a schema 2 file): lay it out first.
        if (s.slotsOf.get(key, expectedVersion) === undefined) return false;
        this.#layOut(key, expectedVersion, keep);
        if (s.keepOldLaidOut.run(old).changes !== 1) return false;
      }
    }
    return s.update.run(expectedVersion + 1, text, at, keep, key, expectedVersion).changes === 1;
  }

  /**
   * Makes the history of `key` (current version `current`) a ring of `keep` slots: of the rows
   * below the current version, the unbroken run of at most `keep - 1` versions just below it
   * stays, each moved to slot `version % keep` (leaving the slot of `current` free); every other
   * row goes. The slow path of a save, inside its transaction: taken once after an upgrade from
   * schema 2 and whenever stores with different keepVersions take turns on a key.
   */
  #layOut(key: string, current: number, keep: number): void {
    const s = this.#s;
    const rows = s.historyRows.all(key) as [number, number, number][]; // newest first
    const kept: [rowid: number, version: number][] = [];
    let next = current - 1;
    let lowestSlot = 0;
    for (const [rowid, slot, version] of rows) {
      lowestSlot = Math.min(lowestSlot, slot);
      if (version === next && version > current - keep) {
        kept.push([rowid, version]);
        next--;
      } else {
        s.deleteRow.run(rowid);
      }
    }
    // Two moves, so no row lands on a slot another still holds: below every slot, then home.
    kept.forEach(([rowid], i) => s.moveRow.run(lowestSlot - 1 - i, rowid));
    for (const [rowid, version] of kept) s.moveRow.run(version % keep, rowid);
  }

  /**
   * Removes `key` and its whole history, in one transaction; a missing key is not an error.
   * @throws SignalyardError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_STORE_CLOSED`;
   * SqliteStoreError `SQLITE_OPERATION_FAILED`.
   */
  async delete(key: string): Promise<void> {
    this.#open();
    assertTextCheckpointKey(key, 'SQLite');
    const s = this.#s;
    await this.#connection().batch.run(
      `delete checkpoint ${JSON.stringify(key)}`,
      () => {
        s.delete.run(key);
        s.clearHistory.run(key);
      },
      this.#failure,
    );
  }

  /**
   * The kept versions of `key`, newest first, the current one included: at most
   * `keepVersions` + 1, read in one statement (a consistent snapshot) when iteration begins,
   * each a fresh copy. `before` keeps only versions lower than it, `limit` caps the count. A
   * missing key yields nothing.
   * @throws SignalyardError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_HISTORY_OPTIONS_INVALID`,
   * `CHECKPOINT_STORE_CLOSED`; SqliteStoreError `SQLITE_OPERATION_FAILED`, `SQLITE_DATA_CORRUPT`.
   */
  async *history(key: string, opts?: { before?: number; limit?: number }): AsyncIterable<Checkpoint> {
    this.#open();
    assertTextCheckpointKey(key, 'SQLite');
    const { before, limit } = resolveHistoryOptions(opts);
    let rows: unknown[];
    try {
      this.#connection().batch.flush();
      rows = this.#s.history.all({
        key,
        keep: this.#keepVersions,
        before: before ?? Number.MAX_SAFE_INTEGER,
        limit: limit ?? -1,
      });
    } catch (error) {
      throw failure('SQLITE_OPERATION_FAILED', this.path, `Cannot list the history of ${JSON.stringify(key)}`, error);
    }
    const checkpoints = rows.map((row) => this.#checkpoint(key, row));
    for (const checkpoint of checkpoints) yield checkpoint;
  }

  /**
   * Version `version` of `key` (a fresh copy) while it is kept — the current one or one of the
   * `keepVersions` before it — else `undefined`.
   * @throws SignalyardError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_VERSION_INVALID`,
   * `CHECKPOINT_STORE_CLOSED`; SqliteStoreError `SQLITE_OPERATION_FAILED`, `SQLITE_DATA_CORRUPT`.
   */
  async loadVersion(key: string, version: number): Promise<Checkpoint | undefined> {
    this.#open();
    assertTextCheckpointKey(key, 'SQLite');
    assertCheckpointVersion(version);
    let row: unknown;
    try {
      this.#connection().batch.flush();
      row = this.#s.loadVersion.get({ key, keep: this.#keepVersions, version });
    } catch (error) {
      throw failure(
        'SQLITE_OPERATION_FAILED',
        this.path,
        `Cannot load version ${version} of checkpoint ${JSON.stringify(key)}`,
        error,
      );
    }
    return row === undefined ? undefined : this.#checkpoint(key, row);
  }

  /**
   * Keys starting with `prefix` (literally: `%`, `_` and `\` are ordinary characters), in
   * ascending code-unit order, as they were when iteration began. Uses the primary-key index
   * (a range scan), never `LIKE`.
   * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID` for a non-string prefix,
   * `CHECKPOINT_STORE_CLOSED`; SqliteStoreError `SQLITE_OPERATION_FAILED`.
   */
  async *list(prefix = ''): AsyncIterable<string> {
    this.#open();
    // SQLite compares UTF-8 bytes, i.e. code points: a range scan of the primary key.
    const { from, to } = keyPrefixRange(prefix);
    let rows: unknown[];
    try {
      this.#connection().batch.flush();
      rows = to === undefined ? this.#s.listFrom.all(from) : this.#s.listRange.all(from, to);
    } catch (error) {
      throw failure(
        'SQLITE_OPERATION_FAILED',
        this.path,
        `Cannot list checkpoints with prefix ${JSON.stringify(prefix)}`,
        error,
      );
    }
    const keys = keysWithPrefix(
      rows.map((row) => (row as unknown[])[0]),
      prefix,
    );
    for (const key of keys) yield key;
  }

  /**
   * Closes the database file (SQLite checkpoints the WAL into it). Idempotent; later calls
   * reject with `CHECKPOINT_STORE_CLOSED`. Checkpoints stay in the file.
   * @throws SqliteStoreError `SQLITE_OPERATION_FAILED` if SQLite fails to close (the store is
   * closed all the same).
   */
  async close(): Promise<void> {
    const conn = this.#conn;
    if (conn === undefined) return;
    this.#conn = undefined;
    try {
      conn.close();
    } catch (error) {
      throw failure(
        'SQLITE_OPERATION_FAILED',
        this.path,
        `Cannot close checkpoint database ${JSON.stringify(this.path)}`,
        error,
      );
    }
  }

  #open(): void {
    if (this.#conn === undefined) throw storeClosedError(STORE_NAME);
  }

  /** The open connection (after `#open()`). */
  #connection(): SqliteConnection {
    return this.#conn as SqliteConnection;
  }

  /** A `[version, data, updated_at]` row as a checkpoint. */
  #checkpoint(key: string, row: unknown): Checkpoint {
    const [version, text, updatedAt] = row as unknown[];
    return checkpointFromRow(version, text, updatedAt, (what, cause) => this.#corrupt(key, what, cause));
  }

  #corrupt(key: string, what: string, cause?: unknown): SqliteStoreError {
    return new SqliteStoreError({
      code: 'SQLITE_DATA_CORRUPT',
      path: this.path,
      message: `Checkpoint ${JSON.stringify(key)} in ${JSON.stringify(this.path)} holds ${what}, expected a positive integer version, JSON text and an ISO timestamp: the file was changed by something other than this store`,
      ...(cause !== undefined && { cause }),
    });
  }
}

/** The store's statements, prepared on `db` (whose schema is ready). */
function prepareStatements(db: Database.Database): Statements {
  const raw = (sql: string): Statement => db.prepare(sql).raw();
  return {
    load: raw(`SELECT version, data, updated_at FROM ${TABLE} WHERE key = ?`),
    version: raw(`SELECT version FROM ${TABLE} WHERE key = ?`),
    insert: db.prepare(
      `INSERT INTO ${TABLE} (key, version, data, updated_at, history_slots) VALUES (?, 1, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
    ),
    update: db.prepare(
      `UPDATE ${TABLE} SET version = ?, data = ?, updated_at = ?, history_slots = ? WHERE key = ? AND version = ?`,
    ),
    // Copies the current row into its slot of the key's ring, overwriting the version it
    // evicts in place, when the key's history is laid out for this store's ring size.
    keepOld: db.prepare(`${KEEP_OLD} AND history_slots = :keep ${KEEP_OLD_UPSERT}`),
    keepOldLaidOut: db.prepare(`${KEEP_OLD} ${KEEP_OLD_UPSERT}`),
    slotsOf: raw(`SELECT history_slots FROM ${TABLE} WHERE key = ? AND version = ?`),
    historyRows: raw(`SELECT rowid, slot, version FROM ${HISTORY_TABLE} WHERE key = ? ORDER BY version DESC`),
    deleteRow: db.prepare(`DELETE FROM ${HISTORY_TABLE} WHERE rowid = ?`),
    moveRow: db.prepare(`UPDATE ${HISTORY_TABLE} SET slot = ? WHERE rowid = ?`),
    clearHistory: db.prepare(`DELETE FROM ${HISTORY_TABLE} WHERE key = ?`),
    history: raw(
      `SELECT version, data, updated_at FROM (${KEPT_VERSIONS}) WHERE version < :before ORDER BY version DESC LIMIT :limit`,
    ),
    loadVersion: raw(`SELECT version, data, updated_at FROM (${KEPT_VERSIONS}) WHERE version = :version`),
    delete: db.prepare(`DELETE FROM ${TABLE} WHERE key = ?`),
    listFrom: raw(`SELECT key FROM ${TABLE} WHERE key >= ? ORDER BY key`),
    listRange: raw(`SELECT key FROM ${TABLE} WHERE key >= ? AND key < ? ORDER BY key`),
  };
}

/** Wraps an error from SQLite (Signalyard errors pass through unchanged). */
function failure(code: SqliteStoreErrorCode, path: string, what: string, error: unknown): SignalyardError {
  if (SignalyardError.isInstance(error)) return error;
  const sqliteCode = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return new SqliteStoreError({
    code,
    path,
    message: `${what}: ${errorText(error)}`,
    ...(typeof sqliteCode === 'string' && { sqliteCode }),
    cause: error,
  });
}

import {
  CheckpointConflictError,
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
  serializeCheckpointData,
  storeClosedError,
  checkpointFromRow,
  errorText,
  isoAt,
  readClock,
} from '@signalyard/core/internal';
import type { Pool } from 'pg';
import { PostgresStoreError, type PostgresStoreErrorCode } from './errors/postgres-store-error.js';
import {
  resolvePostgresStoreOptions,
  type PostgresCheckpointStoreOptions,
} from './postgres-checkpoint-store-options.js';
import { POSTGRES_SCHEMA_VERSION, migrateTable, pgCodeOf } from './postgres-schema.js';
import { InFlightCalls } from './postgres-in-flight.js';
import type { Batcher } from './postgres-batcher.js';
import { PreparedStatements } from './postgres-prepared.js';
import { updateBatcher, type UpdateCall, type UpdateResult } from './postgres-save-batch.js';
import { buildStatements, type Statements } from './postgres-statements.js';
import { historyTableOf, type TableName } from './postgres-table-name.js';

const STORE_NAME = 'PostgresCheckpointStore';

/** How often a save re-runs its compare-and-set when the row changed back to the expected version meanwhile. */
const MAX_CAS_ATTEMPTS = 3;

/** Update statements in flight per store (one per core of a small server): the saves made meanwhile wait and go out together. */
const SAVES_IN_FLIGHT = 2;

/**
 * A `CheckpointStore` in PostgreSQL (through `pg`), shared by every runner process
 * that points at the database: sessions survive a restart and the loss of a machine, and many
 * processes on many machines serve the same sessions. Pair it with {@link PostgresSessionLock}.
 *
 * Same semantics as core's `MemoryCheckpointStore` — it passes the same conformance suite:
 * what is kept is `JSON.stringify(data)` as `text` (not `jsonb`, which refuses the `\u0000` and
 * lone-surrogate escapes JSON.stringify writes); values JSON cannot represent are refused with
 * `CHECKPOINT_DATA_INVALID` and nothing is written. `save` is a compare-and-set in **one
 * statement** — `UPDATE … SET version = version + 1 … WHERE key = $1 AND version = $2`, or for
 * version 0 `INSERT … ON CONFLICT (key) DO NOTHING` — so of any number of writers racing on one
 * key, in one process or in many, exactly one wins and the others get `CheckpointConflictError`
 * (with the version actually stored). `list(prefix)` is a range scan under `COLLATE "C"`: `%`,
 * `_` and `\` are ordinary characters, never LIKE wildcards.
 *
 * Each key keeps the `keepVersions` (default 20) versions before the current one: `history`
 * lists them newest first, `loadVersion` reads one. The save's statement also moves the version
 * it replaces into the history table and drops those beyond `keepVersions`, so there is never a
 * moment without the current version, nor a gap in the versions kept; `delete` removes the
 * key's whole history.
 *
 * Call {@link PostgresCheckpointStore.migrate} once before use (at deploy or at start-up; it is
 * idempotent and safe to run from many processes at once): it creates the table
 * `(key text COLLATE "C" PRIMARY KEY, version bigint, data text, updated_at timestamptz)` and its
 * history table `<table>_history` (the same columns, primary key `(key, version)`, `key`
 * referencing the table with `ON DELETE CASCADE`), and on a database of the previous release
 * adds the history table. `updated_at` is the time of the store's `clock` (default: this process's
 * `Date.now()`), sent with each save; a key's `updated_at` never goes backwards, even when
 * processes' clocks disagree.
 *
 * Keys are non-empty strings of well-formed Unicode without NUL: PostgreSQL text cannot hold a
 * NUL, and a lone surrogate would reach the server as U+FFFD and merge two keys, so such keys are
 * refused (`CHECKPOINT_KEY_INVALID`). (Session keys never contain them.)
 *
 * @throws ConfigError `CONFIG_INVALID` listing every bad option (the constructor never touches
 * the network).
 * @example
 * ```ts
 * import { createRunner } from 'signalyard';
 * import { PostgresCheckpointStore, PostgresSessionLock } from '@signalyard/store-postgres';
 *
 * const store = new PostgresCheckpointStore({ connectionString: process.env.DATABASE_URL!, maxConnections: 5 });
 * await store.migrate();
 * const lock = new PostgresSessionLock({ connectionString: process.env.DATABASE_URL! });
 * const runner = createRunner({ agents, store, lock });
 * // ... serve; any number of processes may do the same against the same database.
 * await runner.close();
 * await lock.close();
 * await store.close();   // the runner closes only stores it created
 * ```
 */
export class PostgresCheckpointStore implements CheckpointStore {
  /** The checkpoint table, as configured (`signalyard_checkpoints` by default). */
  readonly table: string;
  /**
   * The history table next to it: `<table>_history` (for a name too long for that suffix, a cut
   * name with a hash; see the guide), in the same schema.
   */
  readonly historyTable: string;
  readonly #table: TableName;
  readonly #history: TableName;
  readonly #keepVersions: number;
  readonly #clock: Clock;
  readonly #pool: Pool;
  readonly #ownsPool: boolean;
  readonly #sql: Statements;
  /** Runs the statements, prepared unless `preparedStatements: false`. */
  readonly #prepared: PreparedStatements;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Calls in flight (close() waits for them before ending the pool). */
  readonly #inFlight = new InFlightCalls();
  /**
   * The compare-and-set updates of saves: those made while {@link SAVES_IN_FLIGHT} are in flight
   * go out together, in one statement (one round trip, one transaction, one commit and WAL flush),
   * each key once; a save whose compare-and-set lost gets `false`, whatever the others did.
   */
  readonly #updates: Batcher<UpdateCall, UpdateResult>;

  constructor(options: PostgresCheckpointStoreOptions) {
    const resolved = resolvePostgresStoreOptions(options);
    this.table = resolved.table.name;
    this.#table = resolved.table;
    this.#pool = resolved.pool;
    this.#ownsPool = resolved.ownsPool;
    this.#keepVersions = resolved.keepVersions;
    this.#clock = resolved.clock;
    this.#history = historyTableOf(resolved.table);
    this.historyTable = this.#history.name;
    this.#sql = buildStatements(resolved.table, this.#history);
    this.#prepared = new PreparedStatements(this.#sql, resolved.preparedStatements);
    this.#updates = updateBatcher(
      (text, values) => this.#prepared.run(this.#pool, text, values),
      this.#sql,
      this.#keepVersions,
      SAVES_IN_FLIGHT,
    );
  }

  /**
   * Brings the database to this release's schema: creates the checkpoint table and its history
   * table where missing (on a database the previous release created, the history table only:
   * its checkpoints stay as they are and start their history there), marks the schema version
   * (the checkpoint table's comment) and checks that existing tables have this store's shape.
   * One transaction under an advisory lock: idempotent, safe to call from many processes at
   * once (they take turns), and a failure changes nothing; once migrated, it only reads. Run it
   * before the first save — at deploy or at start-up. Until it has run after an upgrade, saves,
   * `history` and `loadVersion` fail with `SCHEMA_OUTDATED` while `load`, `list` and `delete`
   * keep working.
   * @throws PostgresStoreError `POSTGRES_MIGRATE_FAILED` (server unreachable, no permission, a
   * table of another shape under that name), `POSTGRES_SCHEMA_UNSUPPORTED` (migrated by a newer
   * release); SignalyardError `CHECKPOINT_STORE_CLOSED`.
   */
  async migrate(): Promise<void> {
    this.#open();
    await this.#tracked(() => migrateTable(this.#pool, this.#table, this.#history));
  }

  /**
   * The checkpoint under `key` (a fresh copy), or `undefined`.
   * @throws SignalyardError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_STORE_CLOSED`;
   * PostgresStoreError `POSTGRES_OPERATION_FAILED`, `POSTGRES_DATA_CORRUPT`.
   */
  async load(key: string): Promise<Checkpoint | undefined> {
    this.#open();
    assertTextCheckpointKey(key, 'PostgreSQL');
    const rows = await this.#tracked(() =>
      this.#query(this.#sql.load, [key], `Cannot load checkpoint ${JSON.stringify(key)}`),
    );
    const row = rows[0];
    return row === undefined ? undefined : this.#checkpoint(key, row);
  }

  /**
   * Compare-and-set save, in one statement; see `CheckpointStore.save` (core). Returns
   * `expectedVersion + 1`. In the same statement the version it replaces joins the key's history
   * and the versions beyond `keepVersions` leave it.
   * @throws CheckpointConflictError `CHECKPOINT_CONFLICT` when the stored version is not
   * `expectedVersion` (nothing written; `actual` is the version stored); SignalyardError
   * `CHECKPOINT_DATA_INVALID`, `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_VERSION_INVALID`,
   * `CHECKPOINT_STORE_CLOSED`; PostgresStoreError `POSTGRES_OPERATION_FAILED` (nothing written),
   * `POSTGRES_DATA_CORRUPT`, `SCHEMA_OUTDATED` (`migrate()` has not run since the upgrade; nothing
   * written); InvalidArgumentError `CLOCK_INVALID` when the store's clock returns no time
   * (nothing written).
   */
  async save(key: string, data: unknown, expectedVersion: number): Promise<number> {
    this.#open();
    assertTextCheckpointKey(key, 'PostgreSQL');
    assertExpectedVersion(expectedVersion);
    const text = serializeCheckpointData(data, key);
    const at = isoAt(readClock(this.#clock));
    return this.#tracked(() => this.#save(key, text, at, expectedVersion));
  }

  async #save(key: string, text: string, at: string, expectedVersion: number): Promise<number> {
    const what = `Cannot save checkpoint ${JSON.stringify(key)}`;
    let actual = expectedVersion;
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS && actual === expectedVersion; attempt++) {
      const won =
        expectedVersion === 0
          ? (await this.#query(this.#sql.insert, [key, text, at], what)).length === 1
          : await this.#update({ key, text, expected: expectedVersion, at }, what);
      if (won) return expectedVersion + 1;
      // Lost: read what won (a new statement, so it sees the winner's commit). Should the row
      // have changed back to the expected version meanwhile (deleted and re-created), the
      // compare-and-set is simply tried again.
      const stored = (await this.#query(this.#sql.version, [key], what))[0];
      if (stored === undefined) {
        actual = 0;
      } else {
        const version = toVersion(stored[0]);
        if (version === undefined) throw this.#corrupt(key, `version ${describeValue(stored[0])}`);
        actual = version;
      }
    }
    throw new CheckpointConflictError({ key, expected: expectedVersion, actual });
  }

  /**
   * Removes `key` and its whole history (in one statement: the history rows go with the
   * checkpoint's row through their foreign key); a missing key is not an error.
   * @throws SignalyardError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_STORE_CLOSED`;
   * PostgresStoreError `POSTGRES_OPERATION_FAILED`.
   */
  async delete(key: string): Promise<void> {
    this.#open();
    assertTextCheckpointKey(key, 'PostgreSQL');
    await this.#tracked(() => this.#query(this.#sql.delete, [key], `Cannot delete checkpoint ${JSON.stringify(key)}`));
  }

  /**
   * The kept versions of `key`, newest first, the current one included: at most
   * `keepVersions` + 1, read in one statement (one snapshot) when iteration begins, each a fresh
   * copy. `before` keeps only versions lower than it, `limit` caps the count (and the rows read).
   * A missing key yields nothing.
   * @throws SignalyardError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_HISTORY_OPTIONS_INVALID`,
   * `CHECKPOINT_STORE_CLOSED`; PostgresStoreError `POSTGRES_OPERATION_FAILED`,
   * `POSTGRES_DATA_CORRUPT`, `SCHEMA_OUTDATED`.
   */
  async *history(key: string, opts?: { before?: number; limit?: number }): AsyncIterable<Checkpoint> {
    this.#open();
    assertTextCheckpointKey(key, 'PostgreSQL');
    const { before, limit } = resolveHistoryOptions(opts);
    const values = [key, this.#keepVersions, before ?? Number.MAX_SAFE_INTEGER, limit ?? null];
    const rows = await this.#tracked(() =>
      this.#query(this.#sql.history, values, `Cannot list the history of ${JSON.stringify(key)}`),
    );
    const checkpoints = rows.map((row) => this.#checkpoint(key, row));
    for (const checkpoint of checkpoints) yield checkpoint;
  }

  /**
   * Version `version` of `key` (a fresh copy) while it is kept — the current one or one of the
   * `keepVersions` before it — else `undefined`.
   * @throws SignalyardError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_VERSION_INVALID`,
   * `CHECKPOINT_STORE_CLOSED`; PostgresStoreError `POSTGRES_OPERATION_FAILED`,
   * `POSTGRES_DATA_CORRUPT`, `SCHEMA_OUTDATED`.
   */
  async loadVersion(key: string, version: number): Promise<Checkpoint | undefined> {
    this.#open();
    assertTextCheckpointKey(key, 'PostgreSQL');
    assertCheckpointVersion(version);
    const rows = await this.#tracked(() =>
      this.#query(
        this.#sql.loadVersion,
        [key, this.#keepVersions, version],
        `Cannot load version ${version} of checkpoint ${JSON.stringify(key)}`,
      ),
    );
    const row = rows[0];
    return row === undefined ? undefined : this.#checkpoint(key, row);
  }

  /**
   * Keys starting with `prefix` (literally: `%`, `_` and `\` are ordinary characters), in
   * ascending code-unit order like `MemoryCheckpointStore`, as they were when iteration began.
   * One range scan of the primary-key index under `COLLATE "C"`, never `LIKE`.
   * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID` for a non-string prefix,
   * `CHECKPOINT_STORE_CLOSED`; PostgresStoreError `POSTGRES_OPERATION_FAILED`.
   */
  async *list(prefix = ''): AsyncIterable<string> {
    this.#open();
    // Under COLLATE "C" PostgreSQL compares UTF-8 bytes, i.e. code points: a range scan.
    const { from, to } = keyPrefixRange(prefix);
    const what = `Cannot list checkpoints with prefix ${JSON.stringify(prefix)}`;
    const rows = await this.#tracked(() =>
      from === ''
        ? this.#query(this.#sql.listAll, [], what)
        : to === undefined
          ? this.#query(this.#sql.listFrom, [from], what)
          : this.#query(this.#sql.listRange, [from, to], what),
    );
    const keys = keysWithPrefix(
      rows.map((row) => row[0]),
      prefix,
    );
    for (const key of keys) yield key;
  }

  /**
   * Closes the store. Ends the pool if the store opened it (from `connectionString`), after the
   * calls in flight finish; a pool you passed stays open. Idempotent; later calls reject with
   * `CHECKPOINT_STORE_CLOSED`. Checkpoints stay in the table.
   * @throws PostgresStoreError `POSTGRES_OPERATION_FAILED` if ending the pool fails (the store
   * is closed all the same).
   */
  close(): Promise<void> {
    this.#closed = true;
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    await this.#inFlight.drained();
    if (!this.#ownsPool) return;
    try {
      await this.#pool.end();
    } catch (error) {
      throw this.#failure('POSTGRES_OPERATION_FAILED', `Cannot close the connection pool of ${STORE_NAME}`, error);
    }
  }

  /** Runs one call, counted so that close() ends the pool only after it. */
  #tracked<T>(fn: () => Promise<T>): Promise<T> {
    return this.#inFlight.track(fn);
  }

  #open(): void {
    if (this.#closed) throw storeClosedError(STORE_NAME);
  }

  /** Runs one statement on a pooled connection; rows as arrays (no per-row objects). */
  async #query(text: string, values: unknown[], what: string): Promise<unknown[][]> {
    try {
      return await this.#prepared.run(this.#pool, text, values);
    } catch (error) {
      throw await this.#queryError(what, error);
    }
  }

  /** A save's compare-and-set update (with the saves of other keys made meanwhile): whether it won. */
  async #update(call: UpdateCall, what: string): Promise<boolean> {
    let result: UpdateResult;
    try {
      result = await this.#updates.run(call);
    } catch (error) {
      throw await this.#queryError(what, error);
    }
    if (typeof result === 'boolean') return result;
    throw await this.#queryError(what, result.error);
  }

  /** What a failed statement throws: `SCHEMA_OUTDATED` for a missing history table, else `POSTGRES_OPERATION_FAILED`. */
  async #queryError(what: string, error: unknown): Promise<PostgresStoreError> {
    if (pgCodeOf(error) === '42P01' && (await this.#outdated())) return this.#outdatedError(what, error);
    return this.#failure('POSTGRES_OPERATION_FAILED', what, error);
  }

  /** After a missing-table error: true when the checkpoint table is there and its history table is not. */
  async #outdated(): Promise<boolean> {
    try {
      const result = await this.#pool.query<[boolean]>({
        text: 'SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NULL',
        values: [this.#table.sql, this.#history.sql],
        rowMode: 'array',
      });
      return result.rows[0]?.[0] === true;
    } catch {
      return false; // the first error is the one to report
    }
  }

  #outdatedError(what: string, error: unknown): PostgresStoreError {
    return new PostgresStoreError({
      code: 'SCHEMA_OUTDATED',
      table: this.table,
      message:
        `${what}: table ${this.table} has the schema of an earlier @signalyard/store-postgres (no history table ` +
        `${this.historyTable}); this release needs schema ${POSTGRES_SCHEMA_VERSION}: run await store.migrate() once ` +
        '(idempotent, safe from many processes at once). Nothing was written',
      pgCode: '42P01',
      cause: error,
    });
  }

  /** A `[version, data, updatedAt]` row as a checkpoint. */
  #checkpoint(key: string, row: unknown[]): Checkpoint {
    const [rawVersion, text, updatedAt] = row;
    // bigint versions are read as text: a non-numeric one stays a string and is reported as corrupt
    const version = toVersion(rawVersion) ?? rawVersion;
    return checkpointFromRow(version, text, updatedAt, (what, cause) => this.#corrupt(key, what, cause));
  }

  #failure(code: PostgresStoreErrorCode, what: string, error: unknown): PostgresStoreError {
    const pgCode = pgCodeOf(error);
    const hint = pgCode === '42P01' ? ` (run migrate() to create table ${this.table})` : '';
    return new PostgresStoreError({
      code,
      table: this.table,
      message: `${what}: ${errorText(error)}${hint}`,
      ...(pgCode !== undefined && { pgCode }),
      cause: error,
    });
  }

  #corrupt(key: string, what: string, cause?: unknown): PostgresStoreError {
    return new PostgresStoreError({
      code: 'POSTGRES_DATA_CORRUPT',
      table: this.table,
      message: `Checkpoint ${JSON.stringify(key)} in table ${this.table} holds ${what}, expected a positive integer version and JSON text: the table was changed by something other than this store`,
      ...(cause !== undefined && { cause }),
    });
  }
}

/** A stored version (bigint, read as text) as a number, or `undefined` when it is not a positive safe integer. */
function toVersion(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.SqliteStoreError');

/** The stable codes of {@link SqliteStoreError}. */
export type SqliteStoreErrorCode = 'SQLITE_OPEN_FAILED' | 'SQLITE_OPERATION_FAILED' | 'SQLITE_DATA_CORRUPT';

/**
 * SQLite itself failed (codes below); the underlying `SqliteError` is the `cause` and its code
 * (`SQLITE_BUSY`, `SQLITE_CANTOPEN`, `SQLITE_NOTADB`, …) is {@link SqliteStoreError.sqliteCode}.
 *
 * - `SQLITE_OPEN_FAILED`: the file could not be opened or prepared as a checkpoint database
 *   (missing directory, not a database, a `checkpoints` table of another shape).
 * - `SQLITE_OPERATION_FAILED`: a load, save, delete or list failed (the file is locked by
 *   another writer for longer than `busyTimeoutMs`, the disk is full, I/O error). A failed save
 *   writes nothing.
 * - `SQLITE_DATA_CORRUPT`: a stored row is not what this store writes (its data is not JSON,
 *   its version not a positive integer): the file was edited by something else.
 *
 * @example
 * ```ts
 * try {
 *   await store.save(key, data, version);
 * } catch (error) {
 *   if (SqliteStoreError.isInstance(error) && error.sqliteCode === 'SQLITE_BUSY') retryLater();
 * }
 * ```
 */
export class SqliteStoreError extends SignalyardError {
  private readonly [marker] = true;
  declare readonly code: SqliteStoreErrorCode;
  /** The database file (`':memory:'` for an in-memory store). */
  readonly path: string;
  /** SQLite's own error code, e.g. `SQLITE_BUSY`, when SQLite reported one. */
  declare readonly sqliteCode?: string;

  constructor(options: {
    code: SqliteStoreErrorCode;
    path: string;
    message: string;
    sqliteCode?: string;
    cause?: unknown;
  }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    this.path = options.path;
    if (options.sqliteCode !== undefined) this.sqliteCode = options.sqliteCode;
  }

  /** True when `error` is a `SqliteStoreError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is SqliteStoreError {
    return hasErrorMarker(error, marker);
  }
}

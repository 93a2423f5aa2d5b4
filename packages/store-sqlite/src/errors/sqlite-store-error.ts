import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.SqliteStoreError');

/** The codes of {@link SqliteStoreError}. */
export type SqliteStoreErrorCode =
  /** The database file could not be opened or prepared as a checkpoint database (a missing directory, a file that is not a database, a `checkpoints` table of another shape). Fix: check the path and its directory; use a file only this store writes. */
  | 'SQLITE_OPEN_FAILED'
  /** A load, save, delete or list failed: the file was locked by another writer for longer than `busyTimeoutMs`, the disk is full, or an I/O error occurred. A failed save writes nothing. Fix: look at `sqliteCode`; raise `busyTimeoutMs` for many writers, or free disk space. */
  | 'SQLITE_OPERATION_FAILED'
  /** A stored row is not what this store writes (its data is not JSON, its version not a positive integer): the file was edited by something else. Fix: restore the file from a backup or delete the session; keep other writers off the file. */
  | 'SQLITE_DATA_CORRUPT';

/**
 * SQLite itself failed (codes below); the underlying `SqliteError` is the `cause` and its code
 * (`SQLITE_BUSY`, `SQLITE_CANTOPEN`, `SQLITE_NOTADB`, …) is {@link SqliteStoreError.sqliteCode}.
 *
 * See {@link SqliteStoreErrorCode} for each code: its cause and what to do.
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
export class SqliteStoreError extends SignalyardError<SqliteStoreErrorCode> {
  private readonly [marker] = true;
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

import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PostgresStoreError');

/** The codes of {@link PostgresStoreError}. */
export type PostgresStoreErrorCode =
  /** `migrate()` could not create or check the tables, or a table exists with another shape (it belongs to something else). Nothing was changed. Fix: check the database user's rights (creating tables, and owning the checkpoint table to mark its schema version), or choose another `table`. */
  | 'POSTGRES_MIGRATE_FAILED'
  /** `migrate()` found the checkpoint table marked with a newer schema version than this release knows: a newer `@signalyard/store-postgres` migrated it. Nothing was changed. Fix: upgrade `@signalyard/store-postgres` in this process (every process sharing the table should run the same release). */
  | 'POSTGRES_SCHEMA_UNSUPPORTED'
  /** A save, `history` or `loadVersion` found the checkpoint table at the schema of an earlier release (its history table is missing): `migrate()` has not run since the upgrade. Nothing was written; `load` and `list` keep working meanwhile. Fix: call `await store.migrate()` once at startup or deploy (idempotent, safe from many processes at once). */
  | 'SCHEMA_OUTDATED'
  /** A load, save, delete, list or history read failed: the server is unreachable, the connection was lost, or the table is missing because `migrate()` never ran (`pgCode` `42P01`). A failed save writes nothing. Fix: check the server; call `await store.migrate()` once at startup. */
  | 'POSTGRES_OPERATION_FAILED'
  /** A stored row is not what this store writes (its data is not JSON, its version not a positive integer): something else changed the table. Fix: restore the row from a backup or delete the session; keep other writers off the table. */
  | 'POSTGRES_DATA_CORRUPT';

/**
 * PostgreSQL (or the connection to it) failed under a {@link PostgresCheckpointStore}; the
 * error from `pg` is the `cause`, and its code — a SQLSTATE such as `42P01`, `57P01`, `53300`,
 * or a socket code such as `ECONNREFUSED` — is {@link PostgresStoreError.pgCode}.
 *
 * See {@link PostgresStoreErrorCode} for each code: its cause and what to do.
 *
 * @example
 * ```ts
 * try {
 *   await store.load(key);
 * } catch (error) {
 *   if (PostgresStoreError.isInstance(error) && error.pgCode === '42P01') await store.migrate();
 * }
 * ```
 */
export class PostgresStoreError extends SignalyardError<PostgresStoreErrorCode> {
  private readonly [marker] = true;
  /** The checkpoint table, as configured (e.g. `signalyard_checkpoints` or `app.sessions`). */
  readonly table: string;
  /** The code `pg` reported: a SQLSTATE (`42P01`) or a socket error code (`ECONNREFUSED`). */
  declare readonly pgCode?: string;

  constructor(options: {
    code: PostgresStoreErrorCode;
    table: string;
    message: string;
    pgCode?: string;
    cause?: unknown;
  }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    this.table = options.table;
    if (options.pgCode !== undefined) this.pgCode = options.pgCode;
  }

  /** True when `error` is a `PostgresStoreError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is PostgresStoreError {
    return hasErrorMarker(error, marker);
  }
}

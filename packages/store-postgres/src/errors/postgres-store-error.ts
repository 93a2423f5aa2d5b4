import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PostgresStoreError');

/** The stable codes of {@link PostgresStoreError}. */
export type PostgresStoreErrorCode = 'POSTGRES_MIGRATE_FAILED' | 'POSTGRES_OPERATION_FAILED' | 'POSTGRES_DATA_CORRUPT';

/**
 * PostgreSQL (or the connection to it) failed under a {@link PostgresCheckpointStore}; the
 * error from `pg` is the `cause`, and its code — a SQLSTATE such as `42P01`, `57P01`, `53300`,
 * or a socket code such as `ECONNREFUSED` — is {@link PostgresStoreError.pgCode}.
 *
 * - `POSTGRES_MIGRATE_FAILED`: `migrate()` could not create or check the table, or the table
 *   exists with another shape (it belongs to something else: choose another `table`).
 * - `POSTGRES_OPERATION_FAILED`: a load, save, delete or list failed (server unreachable,
 *   connection lost, the table missing because `migrate()` never ran — `pgCode` `42P01`). A
 *   failed save writes nothing.
 * - `POSTGRES_DATA_CORRUPT`: a stored row is not what this store writes (its data is not JSON,
 *   its version not a positive integer): something else changed the table.
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
export class PostgresStoreError extends SignalyardError {
  private readonly [marker] = true;
  declare readonly code: PostgresStoreErrorCode;
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

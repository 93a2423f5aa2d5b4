import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PostgresLockError');

/** The stable codes of {@link PostgresLockError}. */
export type PostgresLockErrorCode =
  'POSTGRES_LOCK_INPUT_INVALID' | 'POSTGRES_LOCK_FAILED' | 'POSTGRES_LOCK_TIMEOUT' | 'POSTGRES_LOCK_CLOSED';

/**
 * A {@link PostgresSessionLock} could not run a function under its lock (codes below). `fn`
 * never ran when this is thrown; a rejection of `fn` itself passes through unchanged, and
 * aborting with `abortSignal` while waiting rejects with core's `AbortedError` instead.
 *
 * - `POSTGRES_LOCK_INPUT_INVALID`: a bad key (empty, not a string, with a NUL or a lone
 *   surrogate), `fn` not a function, or bad options for `withLock`.
 * - `POSTGRES_LOCK_FAILED`: the lock connection could not be opened, or it failed or was lost
 *   while taking the lock; {@link PostgresLockError.pgCode} carries `pg`'s code.
 * - `POSTGRES_LOCK_TIMEOUT`: the lock was still held elsewhere after `acquireTimeoutMs`.
 * - `POSTGRES_LOCK_CLOSED`: `close()` was called before the lock was taken.
 *
 * @example
 * ```ts
 * try {
 *   await lock.withLock(sessionKey, work);
 * } catch (error) {
 *   if (PostgresLockError.isInstance(error) && error.code === 'POSTGRES_LOCK_TIMEOUT') retryLater();
 *   else throw error;
 * }
 * ```
 */
export class PostgresLockError extends SignalyardError {
  private readonly [marker] = true;
  declare readonly code: PostgresLockErrorCode;
  /** The lock key, when the error concerns one key. */
  declare readonly key?: string;
  /** The code `pg` reported: a SQLSTATE (`57P01`) or a socket error code (`ECONNREFUSED`). */
  declare readonly pgCode?: string;

  constructor(options: {
    code: PostgresLockErrorCode;
    message: string;
    key?: string;
    pgCode?: string;
    cause?: unknown;
  }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    if (options.key !== undefined) this.key = options.key;
    if (options.pgCode !== undefined) this.pgCode = options.pgCode;
  }

  /** True when `error` is a `PostgresLockError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is PostgresLockError {
    return hasErrorMarker(error, marker);
  }
}

import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PostgresLockError');

/** The codes of {@link PostgresLockError}. */
export type PostgresLockErrorCode =
  /** `withLock` was given a bad key (empty, not a string, with a NUL or a lone surrogate), an `fn` that is not a function, or bad options; `fn` did not run. Fix: pass a non-empty, well-formed session key and a function, as the message names. */
  | 'POSTGRES_LOCK_INPUT_INVALID'
  /** The lock connection could not be opened, or failed or was lost while taking the lock; `pgCode` carries `pg`'s code and `fn` did not run. Fix: check the server and the connection settings (a lock connection must not go through a transaction-mode PgBouncer); retry. */
  | 'POSTGRES_LOCK_FAILED'
  /** The lock was still held (by another process, or by an earlier call for the key in this process) after `acquireTimeoutMs` (default 120000 ms); `fn` did not run. Fix: retry later, or raise `acquireTimeoutMs` (`Infinity`: no limit) if turns are legitimately long. */
  | 'POSTGRES_LOCK_TIMEOUT'
  /** `close()` was called on the lock before the lock was taken; `fn` did not run. Fix: close the lock only after the runner using it has closed. */
  | 'POSTGRES_LOCK_CLOSED'
  /** The lock connection failed or closed while `fn` ran (network, server restart, `pg_terminate_backend`): the server released the lock and another process may hold the key now. `fn`'s `lockSignal` fired with this error, and `withLock` rejects with it even if `fn` resolved; `pgCode` carries `pg`'s code. Fix: treat `fn`'s work as not done under the lock (a Runner discards the turn and reports `SESSION_LOCK_FAILED`); send the signal again. */
  | 'POSTGRES_LOCK_LOST'
  /** `withLock(key)` was called inside `fn` of a `withLock` for the same key on the same lock (directly or from work `fn` started): it would wait for itself forever, so it is refused at once and the inner `fn` did not run. Fix: do the inner work in the outer `fn`, which already holds the lock. */
  | 'POSTGRES_LOCK_REENTERED';

/**
 * A {@link PostgresSessionLock} could not run a function under its lock, or lost the lock while
 * it ran (codes below). `fn` never ran when this is thrown, except with `POSTGRES_LOCK_LOST`; a
 * rejection of `fn` itself passes through unchanged (unless the lock was lost meanwhile), and
 * aborting with `abortSignal` while waiting rejects with core's `AbortedError` instead.
 *
 * See {@link PostgresLockErrorCode} for each code: its cause and what to do.
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
export class PostgresLockError extends SignalyardError<PostgresLockErrorCode> {
  private readonly [marker] = true;
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

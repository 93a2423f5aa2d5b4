import { AbortedError, describeValue } from '@signalyard/core';
import { errorText, unstorableTextIndex } from '@signalyard/core/internal';
import { PostgresLockError } from './errors/postgres-lock-error.js';
import { pgCodeOf } from './postgres-schema.js';

// The errors of PostgresSessionLock.withLock, each naming the key and what to do.

/** Checks `withLock`'s arguments. @throws PostgresLockError `POSTGRES_LOCK_INPUT_INVALID`. @internal */
export function checkInput(key: unknown, fn: unknown, opts: unknown): void {
  let problem: string | undefined;
  if (typeof key !== 'string' || key === '') {
    problem = `Invalid session lock key ${describeValue(key)}: expected a non-empty string`;
  } else if (unstorableTextIndex(key) !== -1) {
    const at = unstorableTextIndex(key);
    problem = `Invalid session lock key ${describeValue(key)}: it contains ${key.charCodeAt(at) === 0 ? 'a NUL character' : 'a lone surrogate'} at index ${at}; expected well-formed Unicode without NUL`;
  } else if (typeof fn !== 'function') {
    problem = `Invalid function for withLock(${JSON.stringify(key)}): expected a function returning a promise, got ${describeValue(fn)}`;
  } else if (opts !== undefined && (typeof opts !== 'object' || opts === null)) {
    problem = `Invalid options for withLock(${JSON.stringify(key)}): expected { abortSignal? }, got ${describeValue(opts)}`;
  } else if (opts !== undefined) {
    const abortSignal = (opts as { abortSignal?: unknown }).abortSignal;
    if (abortSignal !== undefined && !(abortSignal instanceof AbortSignal)) {
      problem = `Invalid abortSignal for withLock(${JSON.stringify(key)}): expected an AbortSignal, got ${describeValue(abortSignal)}`;
    }
  }
  if (problem !== undefined) {
    throw new PostgresLockError({
      code: 'POSTGRES_LOCK_INPUT_INVALID',
      message: problem,
      ...(typeof key === 'string' && { key }),
    });
  }
}

/** The caller's `abortSignal` fired while the call waited. @internal */
export function abortedError(key: string, abortSignal: AbortSignal): AbortedError {
  return new AbortedError({
    message: `Aborted while waiting for the session lock on ${JSON.stringify(key)}`,
    cause: abortSignal.reason,
  });
}

/** @internal */
export function timeoutError(key: string, timeoutMs: number): PostgresLockError {
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_TIMEOUT',
    key,
    message: `The session lock on ${JSON.stringify(key)} was still held (by another process, or an earlier call in this process) after ${timeoutMs} ms (acquireTimeoutMs)`,
  });
}

/** @internal */
export function reenteredError(key: string): PostgresLockError {
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_REENTERED',
    key,
    message: `withLock(${JSON.stringify(key)}) was called inside a withLock(${JSON.stringify(key)}) of the same lock, which already holds the key: it would wait for itself forever. Expected the inner work to run in the outer fn`,
  });
}

/** @internal */
export function lostError(key: string, cause: unknown): PostgresLockError {
  const pgCode = pgCodeOf(cause);
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_LOST',
    key,
    message: `Lost the session lock on ${JSON.stringify(key)} while its function ran: the lock connection ${cause === undefined ? 'closed' : `failed (${errorText(cause)})`}, so the server released the lock and another process may hold it now`,
    ...(pgCode !== undefined && { pgCode }),
    ...(cause !== undefined && { cause }),
  });
}

/** @internal */
export function closedError(key?: string): PostgresLockError {
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_CLOSED',
    message: `PostgresSessionLock is closed${key === undefined ? '' : `: cannot lock ${JSON.stringify(key)}`}; create a new lock`,
    ...(key !== undefined && { key }),
  });
}

/** @internal */
export function lockFailed(key: string, what: string, error: unknown): PostgresLockError {
  const pgCode = pgCodeOf(error);
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_FAILED',
    key,
    message: error === undefined ? what : `${what}: ${errorText(error)}`,
    ...(pgCode !== undefined && { pgCode }),
    ...(error !== undefined && { cause: error }),
  });
}

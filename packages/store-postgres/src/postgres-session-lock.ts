import { AsyncLocalStorage } from 'node:async_hooks';
import { AbortedError, describeValue, type SessionLock } from '@signalyard/core';
import { unstorableTextIndex, errorText } from '@signalyard/core/internal';
import { Client } from 'pg';
import { PostgresLockError } from './errors/postgres-lock-error.js';
import { pgCodeOf } from './postgres-schema.js';
import {
  resolvePostgresLockOptions,
  type PostgresSessionLockOptions,
  type ResolvedPostgresLockOptions,
} from './postgres-session-lock-options.js';

const TRY_LOCK = 'SELECT pg_try_advisory_lock(hashtextextended($1, 0))';
const UNLOCK = 'SELECT pg_advisory_unlock(hashtextextended($1, 0))';

/** The lock connection and what is known about it. */
interface Connection {
  readonly client: Client;
  /** True when the lock opened it (and so reopens and ends it). */
  readonly owned: boolean;
  /** Settles when the connection is open. */
  readonly ready: Promise<unknown>;
  /** Set when the connection failed or ended: the server has released every lock it held. */
  lost: boolean;
  /** Settles when the last query sent settles: queries go one at a time (pg 9 will not queue them). */
  tail: Promise<unknown>;
  /** The calls running `fn` on this connection: told (with `pg`'s error, if any) when it is lost. */
  readonly holders: Set<(cause: unknown) => void>;
  readonly detach: () => void;
}

/** A key this lock holds in the current async context (a chain: the innermost `withLock` first). */
interface Holding {
  readonly key: string;
  /** False once that `withLock` has ended: work it started and left running may lock the key again. */
  active: boolean;
  readonly outer: Holding | undefined;
}

/** Runs one query on the connection after the ones already sent. */
function serially<T>(connection: Connection, text: string, key: string): Promise<T> {
  const run = (): Promise<T> => connection.client.query({ text, values: [key], rowMode: 'array' }) as Promise<T>;
  const result = connection.tail.then(run, run);
  connection.tail = result.catch(() => undefined);
  return result;
}

/** One `withLock` call while it waits: stopped by its abortSignal, its deadline or `close()`. */
class Wait {
  readonly controller = new AbortController();
  reason: Error | undefined;
  /** True when the stop was the deadline: a try already under way may still take the lock. */
  timedOut = false;

  stop(reason: Error, timedOut = false): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.timedOut = timedOut;
    this.controller.abort(reason);
  }

  /** True once stopped (a method, not a field read: it changes across awaits). */
  stopped(): boolean {
    return this.reason !== undefined;
  }

  /** True once stopped by an abort or `close()`: then not even a lock already granted is kept. */
  cancelled(): boolean {
    return this.reason !== undefined && !this.timedOut;
  }

  /** Throws the reason this wait was stopped for, if it was. */
  throwIfStopped(): void {
    if (this.reason !== undefined) throw this.reason;
  }
}

/** One `withLock` call while it runs `fn`: its `lockSignal`, fired when the connection is lost. */
class Hold {
  readonly controller = new AbortController();
  /** Set when the lock was lost while `fn` ran. */
  lost: PostgresLockError | undefined;

  constructor(readonly key: string) {}

  lose(cause: unknown): void {
    if (this.lost !== undefined) return;
    this.lost = lostError(this.key, cause);
    this.controller.abort(this.lost);
  }
}

/**
 * A `SessionLock` (core) across processes and machines, on PostgreSQL **session-level advisory
 * locks**: give it to every Runner that shares a {@link PostgresCheckpointStore}, and each
 * signal's load → apply → save runs while its process alone holds the session.
 *
 * How it works: `withLock(key, fn)` takes `pg_try_advisory_lock(hashtextextended(key, 0))` on
 * **one dedicated connection per lock instance** (make one per process), retrying with jittered
 * exponential backoff (`retryMinMs` … `retryMaxMs`) while another process holds it, runs `fn`,
 * and releases with `pg_advisory_unlock` in a `finally`. Why this shape:
 *
 * - A lock never holds a pooled connection for the length of a turn (model calls take seconds):
 *   the locks of every session of the process share that one connection, which is busy only for
 *   the few microseconds of each try and unlock (sent one at a time, in order).
 * - Session-level, not transaction-level: no transaction stays open while `fn` runs.
 * - A process that dies releases its locks with its connection: the server ends the session,
 *   and other processes take those sessions over at their next try.
 * - Advisory locks are re-entrant per connection, so two calls for one key in one process would
 *   both get it: calls for the same key in one process wait in line (FIFO) in the process first,
 *   and only the head of the line asks the server. A call for a key made from inside `fn` of a
 *   call holding that key would wait for itself: it is refused at once with
 *   `POSTGRES_LOCK_REENTERED`.
 * - Every wait is bounded by `acquireTimeoutMs` (default 2 minutes; `POSTGRES_LOCK_TIMEOUT`).
 *
 * If the lock connection is lost while `fn` runs (network, server restart, `pg_terminate_backend`)
 * the server has released the lock and another process may take the session: `fn`'s `lockSignal`
 * fires (reason: a `PostgresLockError` with `POSTGRES_LOCK_LOST`) so that `fn` can stop, and
 * `withLock` rejects with that error even if `fn` resolves. A Runner aborts the turn and reports
 * `SESSION_LOCK_FAILED`; the checkpoint store's compare-and-set still refuses any stale save, so
 * nothing is overwritten. The loss is seen as soon as `pg` reports the connection failed or closed
 * (at once for a terminated backend or a server restart; for a silent network partition, when TCP
 * keep-alive gives up). With `connectionString` the next call opens a new connection. Keys are
 * hashed to 64 bits: two keys colliding would share one lock (more exclusion, never less).
 *
 * @throws ConfigError `CONFIG_INVALID` listing every bad option (the constructor never touches
 * the network).
 * @example
 * ```ts
 * import { PostgresCheckpointStore, PostgresSessionLock } from '@signalyard/store-postgres';
 *
 * const lock = new PostgresSessionLock({ connectionString: process.env.DATABASE_URL! });
 * const runner = createRunner({ agents, store, lock });
 * // or directly:
 * const stop = new AbortController();
 * await lock.withLock('agent:main:main', async (lockSignal) => {
 *   // no other process using this database runs code under this key at the same time;
 *   // lockSignal fires if the lock is lost meanwhile: stop, the work is no longer exclusive
 * }, { abortSignal: stop.signal });
 * await lock.close();
 * ```
 */
export class PostgresSessionLock implements SessionLock {
  readonly #o: ResolvedPostgresLockOptions;
  #connection: Connection | undefined;
  /** Keys taken (or being taken) in this process → the calls waiting behind, in order. */
  readonly #lines = new Map<string, (() => void)[]>();
  readonly #waits = new Set<Wait>();
  /** The keys held in the current async context, to refuse a call that would wait for itself. */
  readonly #holding = new AsyncLocalStorage<Holding>();
  /** `withLock` calls past validation and not yet settled. */
  #calls = 0;
  #drained: (() => void) | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(options: PostgresSessionLockOptions) {
    this.#o = resolvePostgresLockOptions(options);
    if (this.#o.client !== undefined) this.#connection = watch(this.#o.client, false, Promise.resolve());
  }

  /**
   * Runs `fn` while this process holds the lock for `key` across every process using the same
   * database, and returns (or rejects with) what `fn` returns; the lock is released however `fn`
   * ends. Waits, at most `acquireTimeoutMs` (default 2 minutes), while another process — or
   * another call in this process — holds it.
   *
   * `fn` receives a `lockSignal` that fires when the lock connection fails or closes while `fn`
   * runs (the server has then released the lock), with the `POSTGRES_LOCK_LOST` error as its
   * reason; `withLock` then rejects with that error, whether `fn` resolves or rejects.
   * @throws AbortedError `ABORTED` when `abortSignal` fires (or has fired) before the lock is
   * taken (`fn` never runs); PostgresLockError `POSTGRES_LOCK_INPUT_INVALID`,
   * `POSTGRES_LOCK_REENTERED`, `POSTGRES_LOCK_FAILED`, `POSTGRES_LOCK_TIMEOUT`,
   * `POSTGRES_LOCK_CLOSED` (`fn` never runs), `POSTGRES_LOCK_LOST` (`fn` ran, the lock was lost).
   */
  async withLock<T>(
    key: string,
    fn: (lockSignal: AbortSignal) => Promise<T>,
    opts?: { abortSignal?: AbortSignal },
  ): Promise<T> {
    checkInput(key, fn, opts);
    if (this.#closed) throw closedError(key);
    if (this.#holds(key)) throw reenteredError(key);
    const abortSignal = opts?.abortSignal;
    if (abortSignal?.aborted === true) throw abortedError(key, abortSignal);
    this.#calls++;
    try {
      const connection = await this.#take(key, abortSignal);
      try {
        return await this.#hold(connection, key, fn);
      } finally {
        await this.#unlock(connection, key);
        this.#leave(key);
      }
    } finally {
      if (--this.#calls === 0) this.#drained?.();
    }
  }

  /** True when the current async context runs inside `fn` of a call of this lock holding `key`. */
  #holds(key: string): boolean {
    for (let h = this.#holding.getStore(); h !== undefined; h = h.outer) if (h.active && h.key === key) return true;
    return false;
  }

  /**
   * Takes the lock for `key`: first in this process's line, then on the server. Stopped by
   * `abortSignal`, the deadline or `close()`; on failure this call has left the line.
   */
  async #take(key: string, abortSignal: AbortSignal | undefined): Promise<Connection> {
    const wait = new Wait();
    this.#waits.add(wait);
    const onAbort = (): void => {
      wait.stop(abortedError(key, abortSignal as AbortSignal));
    };
    abortSignal?.addEventListener('abort', onAbort, { once: true });
    const timeoutMs = this.#o.acquireTimeoutMs;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            wait.stop(timeoutError(key, timeoutMs), true);
          }, timeoutMs);
    try {
      await this.#enter(key, wait);
      try {
        return await this.#acquire(key, wait);
      } catch (error) {
        this.#leave(key);
        throw error;
      }
    } finally {
      clearTimeout(timer);
      abortSignal?.removeEventListener('abort', onAbort);
      this.#waits.delete(wait);
    }
  }

  /** Runs `fn` holding `key` on `connection`, with a `lockSignal` that fires if the connection is lost. */
  async #hold<T>(connection: Connection, key: string, fn: (lockSignal: AbortSignal) => Promise<T>): Promise<T> {
    const hold = new Hold(key);
    const onLost = (cause: unknown): void => {
      hold.lose(cause);
    };
    connection.holders.add(onLost);
    if (connection.lost) hold.lose(undefined);
    const holding: Holding = { key, active: true, outer: this.#holding.getStore() };
    try {
      const value = await this.#holding.run(holding, () => fn(hold.controller.signal));
      if (hold.lost !== undefined) throw hold.lost;
      return value;
    } catch (error) {
      throw hold.lost ?? error;
    } finally {
      holding.active = false;
      connection.holders.delete(onLost);
    }
  }

  /**
   * Stops the lock: calls still waiting reject with `POSTGRES_LOCK_CLOSED`, calls running `fn`
   * finish (and release), then the connection is ended if the lock opened it (a `client` you
   * passed stays open). Later calls reject with `POSTGRES_LOCK_CLOSED`. Idempotent.
   */
  close(): Promise<void> {
    this.#closed = true;
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    for (const wait of this.#waits) wait.stop(closedError());
    if (this.#calls > 0) {
      await new Promise<void>((resolve) => {
        this.#drained = resolve;
      });
    }
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection === undefined) return;
    if (!connection.owned) {
      connection.detach();
      return;
    }
    if (!connection.lost) {
      connection.lost = true;
      // Ending the session releases anything still held; an error here changes nothing.
      await connection.client.end().catch(() => undefined);
    }
  }

  /** Waits for this process's earlier calls for `key`; resolves when this call is at the head of the line. */
  async #enter(key: string, wait: Wait): Promise<void> {
    const line = this.#lines.get(key);
    if (line === undefined) {
      this.#lines.set(key, []);
      return;
    }
    wait.throwIfStopped();
    const signal = wait.controller.signal;
    await new Promise<void>((resolve, reject) => {
      const onStop = (): void => {
        const at = line.indexOf(proceed);
        if (at !== -1) line.splice(at, 1);
        reject(wait.reason ?? new Error('stopped'));
      };
      function proceed(): void {
        signal.removeEventListener('abort', onStop);
        resolve();
      }
      line.push(proceed);
      signal.addEventListener('abort', onStop, { once: true });
    });
  }

  /** Hands `key` to the next call in this process's line, or frees it. */
  #leave(key: string): void {
    const line = this.#lines.get(key);
    const next = line?.shift();
    if (next === undefined) this.#lines.delete(key);
    else next();
  }

  /**
   * Tries the advisory lock until it is taken, backing off with jitter in between. An abort or
   * `close()` stops it at once; the deadline stops it after a refused try (so a lock that is
   * free is taken even with `acquireTimeoutMs: 0`).
   */
  async #acquire(key: string, wait: Wait): Promise<Connection> {
    let pause = this.#o.retryMinMs;
    for (;;) {
      if (wait.cancelled()) wait.throwIfStopped();
      const connection = await this.#connect(key);
      let taken: boolean;
      try {
        const result = await serially<{ rows: unknown[][] }>(connection, TRY_LOCK, key);
        taken = result.rows[0]?.[0] === true;
      } catch (error) {
        if (wait.cancelled()) wait.throwIfStopped();
        throw lockFailed(key, `cannot take the session lock on ${JSON.stringify(key)}`, error);
      }
      if (taken) {
        if (!wait.cancelled() && !connection.lost) return connection;
        await this.#unlock(connection, key);
        wait.throwIfStopped();
        continue; // the connection went away as the lock was granted: try again on a new one
      }
      wait.throwIfStopped();
      await sleep(pause / 2 + Math.random() * (pause / 2), wait.controller.signal);
      pause = Math.min(pause * 2, this.#o.retryMaxMs);
    }
  }

  /** The lock connection, opened (or reopened, when the lock owns it) as needed. */
  async #connect(key: string): Promise<Connection> {
    let connection = this.#connection;
    if (connection === undefined || (connection.lost && connection.owned)) {
      const client = new Client({
        connectionString: this.#o.connectionString,
        application_name: 'signalyard-session-lock',
        keepAlive: true,
      });
      connection = watch(client, true, client.connect());
      this.#connection = connection;
    }
    if (connection.lost) {
      throw lockFailed(
        key,
        `cannot take the session lock on ${JSON.stringify(key)}: the lock's client connection was lost (pass a new client)`,
        undefined,
      );
    }
    try {
      await connection.ready;
    } catch (error) {
      connection.lost = true;
      if (this.#connection === connection) this.#connection = undefined;
      throw lockFailed(key, `cannot open the session-lock connection`, error);
    }
    return connection;
  }

  /** Releases `key`; a lost connection has released it already. Never throws. */
  async #unlock(connection: Connection, key: string): Promise<void> {
    if (connection.lost) return;
    try {
      await serially(connection, UNLOCK, key);
    } catch {
      // The lock's state is unknown. A connection the lock owns is ended, so that the server
      // releases whatever it holds rather than keeping a session locked for good.
      // (`lost` may have been set by the connection's own 'error' meanwhile.)
      if (connection.owned && !isLost(connection)) {
        connection.lost = true;
        if (this.#connection === connection) this.#connection = undefined;
        await connection.client.end().catch(() => undefined);
      }
    }
  }
}

/** Reads `lost` afresh (it changes across awaits, when the connection fails). */
function isLost(connection: Connection): boolean {
  return connection.lost;
}

/** Follows a client's life: marks it lost when it fails or ends, and tells the calls holding locks on it. */
function watch(client: Client, owned: boolean, ready: Promise<unknown>): Connection {
  const onGone = (error?: unknown): void => {
    connection.lost = true;
    const holders = [...connection.holders];
    connection.holders.clear();
    for (const holder of holders) holder(error);
  };
  const connection: Connection = {
    client,
    owned,
    ready,
    lost: false,
    tail: Promise.resolve(),
    holders: new Set(),
    detach: () => {
      client.removeListener('error', onGone);
      client.removeListener('end', onGone);
    },
  };
  // Also keeps an 'error' on an idle connection (the server went away) from crashing the process.
  client.on('error', onGone);
  client.on('end', onGone);
  return connection;
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function checkInput(key: unknown, fn: unknown, opts: unknown): void {
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

function abortedError(key: string, abortSignal: AbortSignal): AbortedError {
  return new AbortedError({
    message: `Aborted while waiting for the session lock on ${JSON.stringify(key)}`,
    cause: abortSignal.reason,
  });
}

function timeoutError(key: string, timeoutMs: number): PostgresLockError {
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_TIMEOUT',
    key,
    message: `The session lock on ${JSON.stringify(key)} was still held (by another process, or an earlier call in this process) after ${timeoutMs} ms (acquireTimeoutMs)`,
  });
}

function reenteredError(key: string): PostgresLockError {
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_REENTERED',
    key,
    message: `withLock(${JSON.stringify(key)}) was called inside a withLock(${JSON.stringify(key)}) of the same lock, which already holds the key: it would wait for itself forever. Expected the inner work to run in the outer fn`,
  });
}

function lostError(key: string, cause: unknown): PostgresLockError {
  const pgCode = pgCodeOf(cause);
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_LOST',
    key,
    message: `Lost the session lock on ${JSON.stringify(key)} while its function ran: the lock connection ${cause === undefined ? 'closed' : `failed (${errorText(cause)})`}, so the server released the lock and another process may hold it now`,
    ...(pgCode !== undefined && { pgCode }),
    ...(cause !== undefined && { cause }),
  });
}

function closedError(key?: string): PostgresLockError {
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_CLOSED',
    message: `PostgresSessionLock is closed${key === undefined ? '' : `: cannot lock ${JSON.stringify(key)}`}; create a new lock`,
    ...(key !== undefined && { key }),
  });
}

function lockFailed(key: string, what: string, error: unknown): PostgresLockError {
  const pgCode = pgCodeOf(error);
  return new PostgresLockError({
    code: 'POSTGRES_LOCK_FAILED',
    key,
    message: error === undefined ? what : `${what}: ${errorText(error)}`,
    ...(pgCode !== undefined && { pgCode }),
    ...(error !== undefined && { cause: error }),
  });
}

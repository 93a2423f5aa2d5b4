import { AsyncLocalStorage } from 'node:async_hooks';
import type { SessionLock } from '@signalyard/core';
import { onAbort, sleep, startTimer } from '@signalyard/core/internal';
import { Client } from 'pg';
import { TRY_LOCK, UNLOCK, isLost, serially, watch, type LockConnection } from './postgres-lock-connection.js';
import {
  abortedError,
  checkInput,
  closedError,
  lockFailed,
  reenteredError,
  timeoutError,
} from './postgres-lock-errors.js';
import { Hold, KeyLines, Wait, type Holding } from './postgres-lock-waits.js';
import {
  resolvePostgresLockOptions,
  type PostgresSessionLockOptions,
  type ResolvedPostgresLockOptions,
} from './postgres-session-lock-options.js';

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
  #connection: LockConnection | undefined;
  /** This process's calls for each key, in line. */
  readonly #lines = new KeyLines();
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
        this.#lines.leave(key);
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
  async #take(key: string, abortSignal: AbortSignal | undefined): Promise<LockConnection> {
    const wait = new Wait();
    this.#waits.add(wait);
    const stopListening =
      abortSignal === undefined
        ? undefined
        : onAbort(abortSignal, () => {
            wait.stop(abortedError(key, abortSignal));
          });
    const timeoutMs = this.#o.acquireTimeoutMs;
    const cancelTimer =
      timeoutMs === undefined
        ? undefined
        : startTimer(timeoutMs, () => {
            wait.stop(timeoutError(key, timeoutMs), true);
          });
    try {
      await this.#lines.enter(key, wait);
      try {
        return await this.#acquire(key, wait);
      } catch (error) {
        this.#lines.leave(key);
        throw error;
      }
    } finally {
      cancelTimer?.();
      stopListening?.();
      this.#waits.delete(wait);
    }
  }

  /** Runs `fn` holding `key` on `connection`, with a `lockSignal` that fires if the connection is lost. */
  async #hold<T>(connection: LockConnection, key: string, fn: (lockSignal: AbortSignal) => Promise<T>): Promise<T> {
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

  /**
   * Tries the advisory lock until it is taken, backing off with jitter in between. An abort or
   * `close()` stops it at once; the deadline stops it after a refused try (so a lock that is
   * free is taken even with `acquireTimeoutMs: 0`).
   */
  async #acquire(key: string, wait: Wait): Promise<LockConnection> {
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
      // Stopped early by an abort, `close()` or the deadline: the loop's checks decide what follows.
      await sleep(pause / 2 + Math.random() * (pause / 2), wait.controller.signal).catch(ignore);
      pause = Math.min(pause * 2, this.#o.retryMaxMs);
    }
  }

  /** The lock connection, opened (or reopened, when the lock owns it) as needed. */
  async #connect(key: string): Promise<LockConnection> {
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
  async #unlock(connection: LockConnection, key: string): Promise<void> {
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

function ignore(): void {
  // the wait was stopped: `#acquire`'s checks say what happens next
}

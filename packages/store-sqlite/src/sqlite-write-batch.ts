import type Database from 'libsql';

/** What a failure of SQLite itself (not of a write's own checks) becomes for the caller of `what`. */
type WriteFailure = (what: string, error: unknown) => unknown;

type Result = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Write {
  readonly what: string;
  readonly fn: () => unknown;
  readonly failure: WriteFailure;
  readonly committed: ((value: unknown) => void) | undefined;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** A batch this long is flushed at the next microtask rather than at the turn of the event loop. */
const MAX_BATCH = 256;

/**
 * Group commit for one connection: the writes asked for until the event loop turns (flushed at
 * `setImmediate`) — those of every continuation run meanwhile, e.g. many sessions' turns resuming
 * together and the writes their settles lead to — run in one `BEGIN IMMEDIATE` transaction
 * ({@link MAX_BATCH} writes at most: a full batch is flushed at the next microtask), and each
 * caller's promise settles once that transaction committed (never before its `COMMIT` returned). A commit costs far more than the statements in it, so a worker settling many
 * sessions at once (or a producer accepting for many) pays one commit per batch instead of one
 * per write. The writers of one connection — a checkpoint store and an inbox sharing it
 * (`SqliteConnection`) — share its batch: a turn's save and the inbox's writes of many sessions
 * commit together.
 *
 * One write failing undoes only itself: the batch first runs every write under one savepoint;
 * when one throws, that savepoint is rolled back and the writes run again, each in a savepoint of
 * its own (so a write's function may run twice: it must do nothing but run statements). A failed
 * `BEGIN` or `COMMIT` fails every write of the batch (nothing of it was written).
 * @internal
 */
export class SqliteWriteBatch {
  readonly #db: Database.Database;
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  readonly #rollback: Database.Statement;
  readonly #savepoint: Database.Statement;
  readonly #release: Database.Statement;
  readonly #rollbackTo: Database.Statement;
  readonly #savepointAll: Database.Statement;
  readonly #releaseAll: Database.Statement;
  readonly #rollbackToAll: Database.Statement;
  #queue: Write[] = [];

  constructor(db: Database.Database) {
    this.#db = db;
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT write');
    this.#release = db.prepare('RELEASE write');
    this.#rollbackTo = db.prepare('ROLLBACK TO write');
    this.#savepointAll = db.prepare('SAVEPOINT batch');
    this.#releaseAll = db.prepare('RELEASE batch');
    this.#rollbackToAll = db.prepare('ROLLBACK TO batch');
  }

  /**
   * Runs `fn` (synchronous statements) in the next batch's transaction; resolves with its result
   * once committed. What `fn` throws rejects this call only (its savepoint undone), through
   * `failure` — which also says what a failed `BEGIN` or `COMMIT` becomes for this caller.
   * `committed` (which must not throw) hears `fn`'s result once committed, at once — before any
   * other statement runs on the connection, and before the promise settles.
   */
  run<T>(what: string, fn: () => T, failure: WriteFailure, committed?: (value: T) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#queue.length === 0) {
        setImmediate(() => {
          this.#flush();
        });
      } else if (this.#queue.length === MAX_BATCH - 1) {
        queueMicrotask(() => {
          this.#flush(); // full: at once (the pending setImmediate flushes what comes after)
        });
      }
      this.#queue.push({
        what,
        fn,
        failure,
        committed: committed as ((value: unknown) => void) | undefined,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
    });
  }

  /** Runs the writes waiting now, at once (before the connection closes). */
  flush(): void {
    this.#flush();
  }

  #flush(): void {
    const writes = this.#queue;
    if (writes.length === 0) return;
    this.#queue = [];
    try {
      this.#begin.run();
    } catch (error) {
      for (const write of writes) write.reject(write.failure(write.what, error));
      return;
    }
    let results: Result[];
    try {
      results = this.#all(writes) ?? writes.map((write) => this.#one(write));
      this.#commit.run();
    } catch (error) {
      if (this.#db.inTransaction) this.#rollback.run();
      for (const write of writes) write.reject(write.failure(write.what, error));
      return;
    }
    writes.forEach((write, i) => {
      const result = results[i] as Result;
      if (result.ok) write.committed?.(result.value);
    });
    writes.forEach((write, i) => {
      const result = results[i] as Result;
      if (result.ok) write.resolve(result.value);
      else write.reject(result.error);
    });
  }

  /** Every write under one savepoint; `undefined` (and nothing of them kept) when one throws. */
  #all(writes: readonly Write[]): Result[] | undefined {
    this.#savepointAll.run();
    const results: Result[] = [];
    try {
      for (const write of writes) results.push({ ok: true, value: write.fn() });
    } catch {
      this.#rollbackToAll.run();
      this.#releaseAll.run();
      return undefined;
    }
    this.#releaseAll.run();
    return results;
  }

  /** One write, in its savepoint: kept when it returns, undone when it throws (its error is its caller's). */
  #one(write: Write): Result {
    this.#savepoint.run();
    try {
      const value = write.fn();
      this.#release.run();
      return { ok: true, value };
    } catch (error) {
      this.#rollbackTo.run();
      this.#release.run();
      return { ok: false, error: write.failure(write.what, error) };
    }
  }
}

import type Database from 'libsql';

interface Write {
  readonly what: string;
  readonly fn: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit for one connection: the writes asked for before the next microtask runs — those
 * of every continuation already queued, e.g. many sessions' turns resuming together — run in one
 * `BEGIN IMMEDIATE` transaction, each inside a savepoint of its own, and each caller's promise
 * settles once that transaction committed. A commit costs far more than the statements in it, so
 * a worker settling many sessions at once (or a producer accepting for many) pays one commit per
 * batch instead of one per write. One write failing rolls back its savepoint only; a failed
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
  /** What a failure of SQLite itself (not of a write's own checks) becomes. */
  readonly #failure: (what: string, error: unknown) => unknown;
  #queue: Write[] = [];

  constructor(db: Database.Database, failure: (what: string, error: unknown) => unknown) {
    this.#db = db;
    this.#failure = failure;
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT write');
    this.#release = db.prepare('RELEASE write');
    this.#rollbackTo = db.prepare('ROLLBACK TO write');
  }

  /** Runs `fn` (synchronous statements) in the next batch's transaction; resolves with its result once committed. */
  run<T>(what: string, fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#queue.length === 0) {
        queueMicrotask(() => {
          this.#flush();
        });
      }
      this.#queue.push({ what, fn, resolve: resolve as (value: unknown) => void, reject });
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
      for (const write of writes) write.reject(this.#failure(write.what, error));
      return;
    }
    const results: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      for (const write of writes) results.push(this.#one(write));
      this.#commit.run();
    } catch (error) {
      if (this.#db.inTransaction) this.#rollback.run();
      for (const write of writes) write.reject(this.#failure(write.what, error));
      return;
    }
    writes.forEach((write, i) => {
      const result = results[i] as (typeof results)[number];
      if (result.ok) write.resolve(result.value);
      else write.reject(result.error);
    });
  }

  /** One write, in its savepoint: kept when it returns, undone when it throws (its error is its caller's). */
  #one(write: Write): { ok: true; value: unknown } | { ok: false; error: unknown } {
    this.#savepoint.run();
    try {
      const value = write.fn();
      this.#release.run();
      return { ok: true, value };
    } catch (error) {
      this.#rollbackTo.run();
      this.#release.run();
      return { ok: false, error: this.#failure(write.what, error) };
    }
  }
}

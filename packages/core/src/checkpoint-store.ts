/** One stored checkpoint: its compare-and-set version, its data (JSON) and when it was saved. */
export interface Checkpoint {
  /** 1 after the first save, incremented by each save. */
  readonly version: number;
  /** `JSON.parse(JSON.stringify(saved data))`: a fresh copy on every load. */
  readonly data: unknown;
  /** ISO-8601 time of the save. */
  readonly updatedAt: string;
}

/**
 * Durable, versioned storage for session checkpoints, with compare-and-set saves.
 *
 * What a store keeps is `JSON.stringify(data)`, so a loaded value equals
 * `JSON.parse(JSON.stringify(data))`. Values JSON cannot represent (`NaN`, `±Infinity`,
 * `BigInt`, functions, symbols, cycles) are rejected with `CHECKPOINT_DATA_INVALID` and nothing
 * is written. A store never keeps a partial write, and later mutation of a saved object never
 * changes what is stored. Implementations prove themselves with `checkpointStoreConformance`
 * from `@signalyard/core/testing`.
 */
export interface CheckpointStore {
  /** The checkpoint stored under `key`, or `undefined`. */
  load(key: string): Promise<Checkpoint | undefined>;
  /**
   * Compare-and-set: succeeds only if the stored version equals `expectedVersion` (0 = "must
   * not exist yet"); returns the new version (`expectedVersion + 1`).
   * @throws CheckpointConflictError `CHECKPOINT_CONFLICT` when another writer saved first.
   * @throws CheckpointDataError `CHECKPOINT_DATA_INVALID` when `data` is not JSON-safe.
   */
  save(key: string, data: unknown, expectedVersion: number): Promise<number>;
  /** Removes `key` and its whole history; a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Every stored key that starts with `prefix` (taken literally: no wildcards). */
  list(prefix?: string): AsyncIterable<string>;
  /** Releases the store's resources; later calls reject with `CHECKPOINT_STORE_CLOSED`. Idempotent. */
  close?(): Promise<void>;
  /**
   * The kept versions of `key`, newest first, the current one included: at most the store's
   * `keepVersions` + 1. `before` keeps only versions lower than it; `limit` caps the count
   * (page with `before` = the last version received). A missing key yields nothing.
   * Each save appends a version and drops those beyond `keepVersions` in the same step, so the
   * versions listed are consecutive. Optional: a store without it keeps only the current version.
   * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_HISTORY_OPTIONS_INVALID`
   * (`before` or `limit` not an integer ≥ 1, an unknown option).
   */
  history?(key: string, opts?: { before?: number; limit?: number }): AsyncIterable<Checkpoint>;
  /**
   * A kept version of `key` (the current one included), or `undefined` when it was pruned or never existed.
   * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_VERSION_INVALID` (not an integer ≥ 1).
   */
  loadVersion?(key: string, version: number): Promise<Checkpoint | undefined>;
}

/**
 * Cross-process mutual exclusion per session key. A Runner given a lock runs each signal's
 * load → apply → save inside `withLock(sessionKey)`, and aborts the turn when the lock says it
 * lost its hold (the outcome is then `failed` with `SESSION_LOCK_FAILED`).
 *
 * @example
 * ```ts
 * await lock.withLock(sessionKey, async (lockSignal) => {
 *   const checkpoint = await store.load(sessionKey);
 *   const next = await work(checkpoint?.data, { abortSignal: lockSignal }); // stops if the lock is lost
 *   await store.save(sessionKey, next, checkpoint?.version ?? 0);
 * });
 * ```
 */
export interface SessionLock {
  /**
   * Runs `fn` while holding the lock for `key`, and returns (or rejects with) what `fn` returns.
   *
   * `fn` receives a `lockSignal`: an `AbortSignal` that fires when the lock is lost while `fn`
   * runs (for a lock on a database connection: the connection failed or closed, so another
   * process may hold the key now), with the lock's error as its `reason`. `withLock` then
   * rejects with that error even if `fn` resolves. A lock that cannot lose its hold passes a
   * signal that never fires. `fn` may ignore the argument (`() => work()` is a valid `fn`).
   * The parameter is optional in the type only so that locks written before it existed still
   * compile: a new lock passes it, and a caller treats a missing one as a signal that never fires.
   *
   * Rejects with `AbortedError` when `opts.abortSignal` fires while waiting (`fn` never runs).
   */
  withLock<T>(
    key: string,
    fn: (lockSignal?: AbortSignal) => Promise<T>,
    opts?: { abortSignal?: AbortSignal },
  ): Promise<T>;
}

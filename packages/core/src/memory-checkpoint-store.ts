import { assertCheckpointKey, assertExpectedVersion, storeClosedError } from './internal/checkpoint-data.js';
import {
  DEFAULT_KEEP_VERSIONS,
  assertCheckpointVersion,
  keepVersionsProblem,
  resolveHistoryOptions,
} from './internal/checkpoint-history.js';
import type { Checkpoint, CheckpointStore } from './checkpoint-store.js';
import { cloneJson, copyCheckpointData } from './internal/checkpoint-json.js';
import { assertKeyPrefix, keysWithPrefix } from './internal/checkpoint-text.js';
import { KeptVersions } from './internal/history-log.js';
import { registerSaveAtOnce } from './internal/save-at-once.js';
import { systemClock, type Clock } from './clock.js';
import { clockProblem, isClock, isoAt, readClock } from './internal/clock.js';
import { CheckpointConflictError } from './errors/checkpoint-conflict-error.js';
import { ConfigError } from './errors/config-error.js';
import { describeValue } from './signal.js';

interface Entry {
  readonly version: number;
  /** The data as JSON.parse(its JSON text) would return it, owned by the store (never handed out). */
  readonly data: unknown;
  readonly updatedAt: string;
  /** The messages of its history, when its key's log keeps them (`data.history` is `HISTORY_IN_LOG` then). */
  readonly history: readonly unknown[] | undefined;
}

/**
 * Options of {@link MemoryCheckpointStore}.
 *
 * @example
 * ```ts
 * const store = new MemoryCheckpointStore({ keepVersions: 5 });
 * ```
 */
export interface MemoryCheckpointStoreOptions {
  /**
   * How many versions before the current one each key keeps for `history` and `loadVersion`.
   * Default 20; 0 keeps the current version only. Older versions are dropped as new ones are
   * saved. Every kept version is held in memory as a copy of its data with JSON semantics.
   */
  keepVersions?: number;
  /**
   * Where the store reads the time each save is stamped with (`updatedAt` of the checkpoint
   * and of its kept versions). Default `systemClock` (`Date.now()`). A Runner's store should
   * share the Runner's clock, so that one clock stamps everything a session records.
   */
  clock?: Clock;
}

/**
 * A {@link CheckpointStore} in process memory: compare-and-set, JSON semantics and all, so code
 * tested against it behaves the same on the durable stores. Lost when the process exits.
 * A Runner uses one by default.
 *
 * It keeps the last `keepVersions` (default 20) versions of every key before the current one:
 * `history(key)` lists them newest first, `loadVersion(key, version)` reads one, and `delete`
 * drops them all. Memory grows with the number of keys × (`keepVersions` + 1) × the size of a
 * checkpoint's data (frozen chat messages a Runner keeps are shared between versions, not
 * copied); pass `keepVersions: 0` to keep the current version only.
 *
 * Each save is stamped (`updatedAt`) with the time of the `clock` option (default
 * `systemClock`): a test drives it with a clock of its own.
 *
 * @throws ConfigError `CONFIG_INVALID` for options other than `{ keepVersions?, clock? }` with an
 * integer ≥ 0 and a `Clock`.
 * @example
 * ```ts
 * const store = new MemoryCheckpointStore();
 * const v1 = await store.save('agent:main:main', { n: 1 }, 0);   // 1
 * await store.save('agent:main:main', { n: 2 }, v1);             // 2
 * for await (const c of store.history('agent:main:main')) console.log(c.version, c.data); // 2 {n:2}, 1 {n:1}
 * ```
 */
export class MemoryCheckpointStore implements CheckpointStore {
  /** Per key, its kept versions (the current one and up to `keepVersions` before it). */
  readonly #entries = new Map<string, KeptVersions>();
  readonly #keepVersions: number;
  /** Slots in a key's ring: `keepVersions` + 1. */
  readonly #span: number;
  readonly #clock: Clock;
  #closed = false;

  static {
    // The Runner's hot path saves through `saveAtOnce` (core/internal): this store answers at once.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared by identity, never called
    registerSaveAtOnce(MemoryCheckpointStore.prototype.save, (store, key, data, expectedVersion, clock, ms) =>
      #save in store ? store.#save(key, data, expectedVersion, clock, ms) : undefined,
    );
  }

  constructor(options: MemoryCheckpointStoreOptions = {}) {
    const resolved = resolveOptions(options);
    this.#keepVersions = resolved.keepVersions;
    this.#span = resolved.keepVersions + 1;
    this.#clock = resolved.clock;
  }

  /** The checkpoint under `key` (a fresh copy), or `undefined`. */
  async load(key: string): Promise<Checkpoint | undefined> {
    this.#open();
    assertCheckpointKey(key);
    const kept = this.#entries.get(key);
    return kept === undefined ? undefined : toCheckpoint(this.#at(kept, kept.latest));
  }

  /** Compare-and-set save; see {@link CheckpointStore.save}. The version it replaces joins the key's history. */
  save(key: string, data: unknown, expectedVersion: number): Promise<number> {
    // Not `async` (one promise, no async frame: a Runner saves with every signal); errors reject.
    try {
      return Promise.resolve(this.#save(key, data, expectedVersion, undefined, 0));
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the store's own typed error, passed through
      return Promise.reject(error);
    }
  }

  /** `clock` and `ms`: a reading the caller took in this synchronous step (see core/internal `saveAtOnce`). */
  #save(key: string, data: unknown, expectedVersion: number, clock: Clock | undefined, ms: number): number {
    // Nothing awaits between the version check and the write: they are one atomic step.
    this.#open();
    assertCheckpointKey(key);
    assertExpectedVersion(expectedVersion);
    const copy = copyCheckpointData(data, key);
    const kept = this.#entries.get(key);
    const actual = kept === undefined ? 0 : kept.latest;
    if (actual !== expectedVersion) throw new CheckpointConflictError({ key, expected: expectedVersion, actual });
    const version = expectedVersion + 1;
    const read = clock !== undefined && clock === this.#clock && clock === systemClock;
    const updatedAt = isoAt(read ? ms : readClock(this.#clock));
    let versions = kept;
    if (versions === undefined) {
      versions = new KeptVersions(this.#span);
      this.#entries.set(key, versions);
    }
    // One in, one out once the ring is full (the slot of the version `span` before this one).
    versions.put(copy, updatedAt, Math.max(1, version - this.#keepVersions));
    return version;
  }

  /**
   * The kept versions of `key`, newest first, the current one included (at most
   * `keepVersions` + 1), as they were when iteration began; each a fresh copy. `before` keeps
   * only versions lower than it, `limit` caps the count. A missing key yields nothing.
   * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_HISTORY_OPTIONS_INVALID`,
   * `CHECKPOINT_STORE_CLOSED` (at the first step).
   */
  async *history(key: string, opts?: { before?: number; limit?: number }): AsyncIterable<Checkpoint> {
    this.#open();
    assertCheckpointKey(key);
    const { before, limit } = resolveHistoryOptions(opts);
    const kept = this.#entries.get(key);
    if (kept === undefined) return;
    const picked: Entry[] = [];
    const oldest = this.#oldest(kept);
    for (let v = kept.latest; v >= oldest && (limit === undefined || picked.length < limit); v--) {
      if (before === undefined || v < before) picked.push(this.#at(kept, v));
    }
    for (const entry of picked) yield await Promise.resolve(toCheckpoint(entry));
  }

  /**
   * Version `version` of `key` (a fresh copy) while it is kept — the current one or one of the
   * `keepVersions` before it — else `undefined`.
   * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID`, `CHECKPOINT_VERSION_INVALID`,
   * `CHECKPOINT_STORE_CLOSED`.
   */
  async loadVersion(key: string, version: number): Promise<Checkpoint | undefined> {
    this.#open();
    assertCheckpointKey(key);
    assertCheckpointVersion(version);
    const kept = this.#entries.get(key);
    if (kept === undefined || version > kept.latest || version < this.#oldest(kept)) return undefined;
    return toCheckpoint(this.#at(kept, version));
  }

  /** Removes `key` and its whole history; a missing key is not an error. */
  async delete(key: string): Promise<void> {
    this.#open();
    assertCheckpointKey(key);
    this.#entries.delete(key);
  }

  /** Keys starting with `prefix`, in ascending code-unit order, as they were when iteration began. */
  async *list(prefix = ''): AsyncIterable<string> {
    this.#open();
    assertKeyPrefix(prefix);
    for (const key of keysWithPrefix(this.#entries.keys(), prefix)) yield await Promise.resolve(key);
  }

  /** Drops every checkpoint; later calls reject with `CHECKPOINT_STORE_CLOSED`. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#entries.clear();
  }

  /** Version `version` of a key's ring (one it keeps); a history in the log is taken now (what the log drops later does not change it). */
  #at(kept: KeptVersions, version: number): Entry {
    const { data, updatedAt, history } = kept.at(version);
    return { version, data, updatedAt, history };
  }

  /** The oldest version a key's ring keeps. */
  #oldest(kept: KeptVersions): number {
    return Math.max(1, kept.latest - this.#keepVersions);
  }

  #open(): void {
    if (this.#closed) throw storeClosedError('MemoryCheckpointStore');
  }
}

function toCheckpoint(entry: Entry): Checkpoint {
  const data = cloneJson(entry.data);
  // The history back in its place (the key is there already: the data's key order is kept).
  if (entry.history !== undefined) (data as { history: unknown }).history = cloneJson(entry.history);
  return { version: entry.version, data, updatedAt: entry.updatedAt };
}

/** `keepVersions` and `clock` from the options, checked. */
function resolveOptions(options: unknown): { keepVersions: number; clock: Clock } {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ConfigError({
      problems: [
        { path: '', message: `expected store options { keepVersions?, clock? }, got ${describeValue(options)}` },
      ],
    });
  }
  const problems: { path: string; message: string }[] = [];
  const { keepVersions = DEFAULT_KEEP_VERSIONS, clock = systemClock } = options as {
    keepVersions?: unknown;
    clock?: unknown;
  };
  const problem = keepVersionsProblem(keepVersions);
  if (problem !== undefined) problems.push({ path: 'keepVersions', message: problem });
  if (!isClock(clock)) problems.push({ path: 'clock', message: clockProblem(clock) });
  for (const key of Object.keys(options)) {
    if (key !== 'keepVersions' && key !== 'clock') {
      problems.push({ path: key, message: `unknown option ${JSON.stringify(key)} (known: keepVersions, clock)` });
    }
  }
  if (problems.length > 0) throw new ConfigError({ problems });
  return { keepVersions: keepVersions as number, clock: clock as Clock };
}

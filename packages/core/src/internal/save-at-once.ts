import type { CheckpointStore } from '../checkpoint-store.js';
import type { Clock } from '../clock.js';

/** A store's own synchronous save: the new version, or `undefined` when `store` is not of its class. */
type SaveNow = (
  store: CheckpointStore,
  key: string,
  data: unknown,
  expectedVersion: number,
  clock: Clock | undefined,
  ms: number,
) => number | undefined;

/** The in-memory store's `save` as its prototype has it (compared, never called), once that class is loaded. */
let memorySave: CheckpointStore['save'] | undefined;
/** The synchronous core of that `save`. */
let memoryNow: SaveNow | undefined;

/**
 * Registers the in-memory store's `save` and the synchronous step behind it (core's
 * `MemoryCheckpointStore` does, once, when its module loads). @internal
 */
export function registerSaveAtOnce(save: CheckpointStore['save'], now: SaveNow): void {
  memorySave = save;
  memoryNow = now;
}

/**
 * `store.save(key, data, expectedVersion)`, answered at once — the new version, not a promise of
 * it — when `store` is a `MemoryCheckpointStore` whose `save` is the class's own (not overridden
 * by a subclass, a spy or an assignment): a caller that awaits the store in its own frame (the
 * Runner's hot path) then needs no promise and no microtask for the save. Otherwise, and for a
 * save the memory store refuses (a conflict, an unstorable value, a closed store), the store's
 * promise, exactly as `store.save` answers. `clock` and `ms`: a reading of `clock` the caller took
 * in this same synchronous step (the Runner's, for the cause it saves); the store stamps the save
 * with it instead of reading its own clock again when that is the same clock and core's
 * `systemClock` (whose reads are `Date.now()`: two reads in one step differ by nothing a reader
 * could tell apart). A clock of its own the store always reads.
 * @internal
 */
export function saveAtOnce(
  store: CheckpointStore,
  key: string,
  data: unknown,
  expectedVersion: number,
  clock?: Clock,
  ms = 0,
): number | Promise<number> {
  if (memoryNow === undefined || store.save !== memorySave) return store.save(key, data, expectedVersion);
  let version: number | undefined;
  try {
    version = memoryNow(store, key, data, expectedVersion, clock, ms);
  } catch (error) {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the store's own typed error, as its save rejects
    return Promise.reject(error);
  }
  return version ?? store.save(key, data, expectedVersion);
}

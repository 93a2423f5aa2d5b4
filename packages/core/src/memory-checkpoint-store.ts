import {
  assertCheckpointKey,
  assertExpectedVersion,
  serializeCheckpointData,
  storeClosedError,
} from './checkpoint-data.js';
import type { Checkpoint, CheckpointStore } from './checkpoint-store.js';
import { compareCodeUnits } from './checkpoint-text.js';
import { CheckpointConflictError } from './errors/checkpoint-conflict-error.js';
import { CheckpointStoreError } from './errors/checkpoint-store-error.js';
import { describeValue } from './signal.js';

interface Entry {
  readonly version: number;
  readonly text: string;
  readonly updatedAt: string;
}

/**
 * A {@link CheckpointStore} in process memory: compare-and-set, JSON semantics and all, so code
 * tested against it behaves the same on the durable stores. Lost when the process exits.
 * A Runner uses one by default.
 *
 * @example
 * ```ts
 * const store = new MemoryCheckpointStore();
 * const v1 = await store.save('agent:main:main', { n: 1 }, 0);   // 1
 * await store.save('agent:main:main', { n: 2 }, v1);             // 2
 * ```
 */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  /** The checkpoint under `key` (a fresh copy), or `undefined`. */
  async load(key: string): Promise<Checkpoint | undefined> {
    this.#open();
    assertCheckpointKey(key);
    const entry = this.#entries.get(key);
    return entry === undefined
      ? undefined
      : { version: entry.version, data: JSON.parse(entry.text) as unknown, updatedAt: entry.updatedAt };
  }

  /** Compare-and-set save; see {@link CheckpointStore.save}. */
  async save(key: string, data: unknown, expectedVersion: number): Promise<number> {
    // Nothing awaits between the version check and the write: they are one atomic step.
    this.#open();
    assertCheckpointKey(key);
    assertExpectedVersion(expectedVersion);
    const text = serializeCheckpointData(data, key);
    const actual = this.#entries.get(key)?.version ?? 0;
    if (actual !== expectedVersion) throw new CheckpointConflictError({ key, expected: expectedVersion, actual });
    const version = expectedVersion + 1;
    this.#entries.set(key, { version, text, updatedAt: isoNow() });
    return version;
  }

  /** Removes `key`; a missing key is not an error. */
  async delete(key: string): Promise<void> {
    this.#open();
    assertCheckpointKey(key);
    this.#entries.delete(key);
  }

  /** Keys starting with `prefix`, in ascending code-unit order, as they were when iteration began. */
  async *list(prefix = ''): AsyncIterable<string> {
    this.#open();
    if (typeof prefix !== 'string') {
      throw new CheckpointStoreError({
        code: 'CHECKPOINT_KEY_INVALID',
        message: `Invalid key prefix ${describeValue(prefix)}: expected a string`,
      });
    }
    const keys: string[] = [];
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) keys.push(key);
    keys.sort(compareCodeUnits);
    for (const key of keys) yield await Promise.resolve(key);
  }

  /** Drops every checkpoint; later calls reject with `CHECKPOINT_STORE_CLOSED`. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#entries.clear();
  }

  #open(): void {
    if (this.#closed) throw storeClosedError('MemoryCheckpointStore');
  }
}

let lastMs = Number.NaN;
let lastIso = '';
/** The current time as ISO-8601, formatted once per millisecond. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

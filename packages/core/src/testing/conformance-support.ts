import assert from 'node:assert/strict';
import type { CheckpointStore } from '../checkpoint-store.js';
import type { Clock } from '../clock.js';
import { isSignalyardError } from '../errors/signalyard-error.js';

/** The test-registration functions of the runner you use: vitest's, `node:test`'s, mocha's… */
export interface ConformanceHarness {
  /** Your test runner's `describe` (vitest, jest, `node:test`). */
  readonly describe: (name: string, fn: () => void) => unknown;
  /** Your test runner's `it` (or `test`). */
  readonly it: (name: string, fn: () => Promise<void>) => unknown;
}

/**
 * Makes a fresh store for one test, with `keepVersions` when the test gives one (the store's
 * default otherwise), and `clock` when the test gives one (only when the suite was told the
 * store takes one: {@link CheckpointConformanceOptions}). Tests use unique key prefixes, so
 * stores over one database may share it.
 */
export type CheckpointStoreFactory = (opts?: {
  keepVersions?: number;
  clock?: Clock;
}) => CheckpointStore | Promise<CheckpointStore>;

/** What the store under test offers beyond the `CheckpointStore` interface, so that the suite checks it too. */
export interface CheckpointConformanceOptions {
  /**
   * The store takes a `clock` option (core's `Clock`) and stamps every save with its time: the
   * suite then checks `updatedAt` of saves and kept versions against a clock it drives.
   */
  readonly clock?: boolean;
}

/** Registers one case run with a fresh store (made with `opts`) and a unique key prefix. */
export type StoreTest = (
  title: string,
  fn: (store: CheckpointStore, prefix: string) => Promise<void>,
  opts?: { keepVersions?: number; clock?: Clock },
) => void;

/** JSON round trip: what every store must give back for `value`. */
export const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/** Every item of an async iterable, in order. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** Asserts that `promise` rejects with a SignalyardError of `code`, and returns that error. */
export async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isSignalyardError(error), `expected a SignalyardError with code ${code}, got ${String(error)}`);
    assert.equal(error.code, code);
    return error;
  }
  assert.fail(`expected a rejection with code ${code}, but the promise resolved`);
}

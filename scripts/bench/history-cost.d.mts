// Types of ./history-cost.mjs, for the TypeScript benchmarks.
import type { BenchResult } from './harness.mjs';

/** The part of a CheckpointStore the measurement uses. */
export interface HistoryCostStore {
  save(key: string, data: unknown, expectedVersion: number): Promise<number>;
  history(key: string): AsyncIterable<unknown>;
  close?(): Promise<void>;
}
export function historyCost(opts: {
  /** Names the store in the output: `store-sqlite`. */
  readonly label: string;
  /** A fresh, empty, ready store with the given keepVersions. */
  readonly open: (opts: { keepVersions: number }) => Promise<HistoryCostStore>;
  readonly checkpoint: unknown;
  readonly machine: string;
  /** Keys saved round robin (default 100). */
  readonly keys?: number;
  /** Saves per timed call (default 200). */
  readonly batch?: number;
  /** ms per round and task (default 1000). */
  readonly time?: number;
}): Promise<BenchResult[]>;

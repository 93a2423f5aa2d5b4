export interface BenchTask {
  readonly name: string;
  /** Performs `batch` operations. */
  readonly fn: () => unknown;
  readonly batch: number;
}
export interface BenchResult {
  readonly name: string;
  readonly nsPerOp: number;
  readonly opsPerSec: number;
}
export function sharedBenchDir(): string;
export function loadShared(name: 'workloads.mjs' | 'floor.mjs'): Promise<any>;
export function measure(
  tasks: readonly BenchTask[],
  opts?: { rounds?: number; time?: number; warmupTime?: number },
): Promise<BenchResult[]>;
export function printTable(title: string, results: readonly BenchResult[]): void;
export function printRatio(label: string, ratio: number, target: number, kind: 'max' | 'min'): boolean;

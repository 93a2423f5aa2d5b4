// Types of ./harness.mjs, for the TypeScript benchmarks.

export interface BenchTask {
  readonly name: string;
  /** Performs `batch` operations. */
  readonly fn: () => unknown;
  readonly batch: number;
  /** Call once per round and time it directly (for calls that take long), after one warm-up call. */
  readonly once?: boolean;
}
export interface BenchResult {
  readonly name: string;
  readonly batch: number;
  /** ns per operation, one per round, in round order. */
  readonly samples: readonly number[];
  /** The median of `samples`. */
  readonly nsPerOp: number;
  readonly opsPerSec: number;
}
export const MIN_ROUNDS: number;
export function measure(
  tasks: readonly BenchTask[],
  opts?: { rounds?: number; time?: number; warmupTime?: number },
): Promise<BenchResult[]>;
export function printTable(title: string, results: readonly BenchResult[]): void;

/** `ns`: a duration in nanoseconds; `x`: a ratio; `/s`: a rate per second. */
export type FigureUnit = 'ns' | 'x' | '/s';
export type FigureTarget = { readonly atMost: number } | { readonly atLeast: number };
export interface FigureInput {
  /** The workload, short: `router: 1,024 signals, 3 tiers x 10 routes`. */
  readonly workload: string;
  readonly name: string;
  readonly unit: FigureUnit;
  /** One value per round, at least MIN_ROUNDS. */
  readonly samples: readonly number[];
  readonly target?: FigureTarget;
  /** What it is compared with: the floor or peer and its measured value. */
  readonly against?: string;
}
export interface Figure extends FigureInput {
  readonly value: number;
  readonly min: number;
  readonly max: number;
  readonly met: boolean;
  readonly samplesMet: number;
}
export function figure(input: FigureInput): Figure;
type Samples = BenchResult | readonly number[];
export function ratio(a: Samples, b: Samples): number[];
export function difference(a: Samples, b: Samples): number[];
export function perSecond(a: Samples): number[];
export function described(task: BenchResult, label?: string, unit?: 'ns' | '/s'): string;
export function median(values: readonly number[]): number;

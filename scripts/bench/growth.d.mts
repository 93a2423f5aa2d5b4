// Types of ./growth.mjs, for the TypeScript benchmarks.
import type { Figure } from './harness.mjs';

/** Records how much longer `run` takes on `make(4 * n)` than on `make(n)`, for each form. */
export function growth<T extends { readonly length: number }>(opts: {
  readonly workload: string;
  /** `[name, make, n]`: `n` overrides the default for that form. */
  readonly forms: readonly (readonly [name: string, make: (n: number) => T, n?: number])[];
  /** The smaller input's size parameter; the larger is `make(4 * n)`. */
  readonly n: number;
  readonly run: (input: T) => unknown;
  /** The target, as a ratio (default 8: between linear's 4 and quadratic's 16). */
  readonly atMost?: number;
  /** The inputs must be at most this long (a loader's size limit). */
  readonly maxLength?: number;
}): Promise<Figure[]>;

// Types of ./profile.mjs, for the TypeScript benchmarks.
import type { Figure } from './harness.mjs';

/** When `record` missed its target, profiles `runs` calls of `fn` and prints the functions with the most self time. */
export function explainIfMissed(
  record: Figure,
  fn: () => unknown,
  opts?: { runs?: number; top?: number },
): Promise<void>;

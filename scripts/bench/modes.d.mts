// Types of ./modes.mjs, for the TypeScript benchmarks.
import type { BenchResult, BenchTask } from './harness.mjs';

/** The suffix of a figure or task measured with an AsyncLocalStorage active: `@als`. */
export const ALS: '@als';
/** Runs `fn` with the benchmarks' AsyncLocalStorage active (a store set). */
export function inAls<T>(fn: () => T): T;
/** Turns the benchmarks' AsyncLocalStorage off again (its promise hooks with it), between rounds. */
export function leaveAls(): void;
/** `tasks`, then each again named `<name>@als`, its `fn` called inside `als.run(store, fn)`. */
export function withAls(tasks: readonly BenchTask[]): BenchTask[];
/** The results of `measure(withAls(tasks))` as `[[plain, ''], [als, '@als']]`. */
export function modes(
  results: readonly BenchResult[],
): [readonly [BenchResult[], ''], readonly [BenchResult[], '@als']];

/**
 * How urgently the {@link Kernel} runs a process: `realtime` first, then `high`, `normal`,
 * `low` and `idle`. Processes of one priority start in submission order (FIFO). A running
 * process is never preempted.
 */
export type Priority = 'realtime' | 'high' | 'normal' | 'low' | 'idle';

/**
 * Every {@link Priority}, most urgent first.
 *
 * @example
 * ```ts
 * PRIORITIES.indexOf('high');   // 1: runs after realtime, before normal
 * ```
 */
export const PRIORITIES: readonly Priority[] = Object.freeze(['realtime', 'high', 'normal', 'low', 'idle']);

const RANKS: ReadonlyMap<unknown, number> = new Map(PRIORITIES.map((p, i) => [p, i]));

/**
 * True when `value` is a {@link Priority}.
 *
 * @example
 * ```ts
 * const priority = isPriority(req.headers['x-priority']) ? req.headers['x-priority'] : 'normal';
 * ```
 */
export function isPriority(value: unknown): value is Priority {
  return RANKS.has(value);
}

/** 0 for `realtime` … 4 for `idle`: a smaller rank runs first. @internal */
export function priorityRank(priority: Priority): number {
  return RANKS.get(priority) as number;
}

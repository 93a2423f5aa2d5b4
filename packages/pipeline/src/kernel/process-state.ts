/**
 * Where a {@link Kernel} process is in its life:
 *
 * - `new`: just submitted (dispatch checks its service);
 * - `ready`: queued to run;
 * - `blocked`: queued, but its service already runs its `maxConcurrent` processes;
 * - `running`: its pipeline is running;
 * - `waiting`: its pipeline paused on an interrupt, until `resume`;
 * - `terminated`: over, however it ended (its envelope's `terminalReason` says how);
 * - `zombie`: terminated and its result settled; forgotten after `retainTerminatedMs` or `reap`.
 *
 * The only transitions: new → ready | terminated; ready → running | blocked | terminated;
 * blocked → ready | terminated; running → waiting | terminated (no preemption); waiting → ready |
 * terminated; terminated → zombie. Any other is refused with `KERNEL_INVALID_STATE`.
 */
export type ProcessState = 'new' | 'ready' | 'running' | 'waiting' | 'blocked' | 'terminated' | 'zombie';

/**
 * The lifecycle table: the states each state may move to. new → ready | terminated;
 * ready → running | blocked | terminated; blocked → ready | terminated; running → waiting |
 * terminated (no preemption); waiting → ready | terminated; terminated → zombie. Any other
 * transition is refused with `KERNEL_INVALID_STATE`.
 *
 * @example
 * ```ts
 * PROCESS_TRANSITIONS.running;   // ['waiting', 'terminated']
 * ```
 */
export const PROCESS_TRANSITIONS: Readonly<Record<ProcessState, readonly ProcessState[]>> = Object.freeze({
  new: Object.freeze(['ready', 'terminated'] as const),
  ready: Object.freeze(['running', 'blocked', 'terminated'] as const),
  blocked: Object.freeze(['ready', 'terminated'] as const),
  running: Object.freeze(['waiting', 'terminated'] as const),
  waiting: Object.freeze(['ready', 'terminated'] as const),
  terminated: Object.freeze(['zombie'] as const),
  zombie: Object.freeze([] as const),
});

/**
 * True when the lifecycle table ({@link PROCESS_TRANSITIONS}) allows `from → to`.
 *
 * @example
 * ```ts
 * canTransition('waiting', 'ready');   // true: resume
 * canTransition('running', 'ready');   // false: no preemption
 * ```
 */
export function canTransition(from: ProcessState, to: ProcessState): boolean {
  return PROCESS_TRANSITIONS[from].includes(to);
}

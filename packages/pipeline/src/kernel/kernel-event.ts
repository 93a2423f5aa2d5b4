import type { Interrupt } from '../envelope/interrupt.js';
import type { Priority } from './priority.js';
import type { ProcessState } from './process-state.js';
import type { ResourceQuota } from './resource-quota.js';

/**
 * One event of a {@link Kernel} (`on` / `events`), discriminated by `type`.
 *
 * - `process_created`: `submit` created a process (always its first event).
 * - `process_state_changed`: a lifecycle transition `from → to`.
 * - `interrupt_raised`: the process's pipeline paused on `interrupt`; the process is `waiting`
 *   (a listener may `resume` it at once).
 * - `resource_exhausted`: a quota stopped the process; its `terminated` transition follows.
 *   `used` is what the process had used of it (for `timeoutMs`: its running time in ms).
 *
 * Events are delivered synchronously, in order, at the end of the kernel operation that caused
 * them, so a listener always sees a consistent kernel and may call any kernel method.
 *
 * @example
 * ```ts
 * kernel.on((event) => {
 *   if (event.type === 'resource_exhausted') log.warn(`${event.pid}: ${event.resource} ${event.used}/${event.limit}`);
 * });
 * ```
 */
export type KernelEvent =
  | { type: 'process_created'; pid: string; priority: Priority; service: string }
  | { type: 'process_state_changed'; pid: string; from: ProcessState; to: ProcessState }
  | { type: 'interrupt_raised'; pid: string; interrupt: Interrupt }
  | { type: 'resource_exhausted'; pid: string; resource: keyof ResourceQuota; used: number; limit: number };

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
  | {
      /** A run was submitted. */
      type: 'process_created';
      /** The process id `submit` returned. */
      pid: string;
      /** Its scheduling priority. */
      priority: Priority;
      /** The service it was submitted for (its quota's name). */
      service: string;
    }
  | {
      /** A process moved from one state to another. */
      type: 'process_state_changed';
      /** The process id. */
      pid: string;
      /** The state it left. */
      from: ProcessState;
      /** The state it entered. */
      to: ProcessState;
    }
  | {
      /** A process's run paused on an interrupt. */
      type: 'interrupt_raised';
      /** The process id. */
      pid: string;
      /** What the run waits on. */
      interrupt: Interrupt;
    }
  | {
      /** A process ran out of one of its quotas. */
      type: 'resource_exhausted';
      /** The process id. */
      pid: string;
      /** The quota that ran out. */
      resource: keyof ResourceQuota;
      /** How much was used. */
      used: number;
      /** The quota's limit. */
      limit: number;
    };

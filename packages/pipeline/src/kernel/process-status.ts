import type { Envelope } from '../envelope/envelope.js';
import type { Interrupt } from '../envelope/interrupt.js';
import type { Priority } from './priority.js';
import type { ProcessState } from './process-state.js';
import type { ResourceQuota } from './resource-quota.js';

/**
 * What `Kernel.submit` and `Kernel.resume` return: the process id and its result.
 *
 * `result` settles when the process terminates (its envelope has `terminated: true` and a
 * `terminalReason`) or pauses on an interrupt (state `waiting`, `envelope.interrupt` set; answer
 * it with `Kernel.resume`, which returns a new handle). It **never rejects**: unknown or
 * unhealthy services, cancellation, exhausted quotas and failed stages are terminal reasons.
 *
 * @example
 * ```ts
 * const { pid, result } = kernel.submit({ question: 'Which train?' });
 * const env = await result;
 * if (env.interrupt !== undefined) await kernel.resume(pid, env.interrupt.id, { text: 'the 9:15' }).result;
 * ```
 */
export interface ProcessHandle {
  /** The process id: `status(pid)`, `resume(pid, …)`, `cancel(pid)` take it. */
  readonly pid: string;
  /** Resolves with the final envelope when the process ends. */
  readonly result: Promise<Envelope>;
}

/** What a process has used so far (across `resume`s). */
export interface ProcessUsage {
  /** Model calls (`ctx.model.generate`). */
  llmCalls: number;
  /** Tool calls reported with `ctx.countToolCall`. */
  toolCalls: number;
  /** Stage executions. */
  agentHops: number;
  /** Loop-backs. */
  iterations: number;
  /** Time spent running, in ms (not queued, not waiting on an interrupt). */
  elapsedMs: number;
}

/**
 * A snapshot of one process (`Kernel.status`): its state, priority and service, its usage, and
 * what remains of its quota (only the keys its quota sets; never below 0). `interrupt` is the
 * pending interrupt while the process is `waiting`.
 *
 * @example
 * ```ts
 * const s = kernel.status(pid);
 * if (s?.state === 'waiting') showQuestion(s.interrupt?.payload);
 * ```
 */
export interface ProcessStatus {
  /** The process id. */
  pid: string;
  /** Where it is in its lifecycle. */
  state: ProcessState;
  /** Its scheduling priority. */
  priority: Priority;
  /** The service it was submitted to (`''` when none was named and none is registered). */
  service: string;
  /** What it has used so far. */
  usage: ProcessUsage;
  /** What its quota has left, for each limit the quota sets. */
  remaining: Partial<ResourceQuota>;
  /** While paused: what it waits on. */
  interrupt?: Interrupt;
}

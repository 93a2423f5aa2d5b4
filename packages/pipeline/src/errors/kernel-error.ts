import { SignalyardError, hasErrorMarker } from '@signalyard/core';
import type { ProcessState } from '../kernel/process-state.js';

const marker = Symbol.for('signalyard.error.KernelError');

/** The codes of {@link KernelError}. */
export type KernelErrorCode =
  /** A `Kernel` method was given a pid no process has: never submitted, or already forgotten (after `retainTerminatedMs` or `reap`). Fix: use the `pid` that `submit` returned, and read a finished process's envelope before it is forgotten (or raise `retainTerminatedMs`). */
  | 'KERNEL_UNKNOWN_PROCESS'
  /** The process is not in a state that allows the call (`resume` of a process that is not `waiting`, `reap` of one that has not terminated), or a lifecycle transition outside the table was attempted. Fix: check `kernel.status(pid).state` first; resume only waiting processes and reap only terminated ones. */
  | 'KERNEL_INVALID_STATE'
  /** `resume` named an interrupt id that is not the one the process waits on. Fix: pass `envelope.interrupt.id` of the envelope its last `result` resolved with (or `kernel.status(pid).interrupt.id`). */
  | 'KERNEL_INTERRUPT_MISMATCH'
  /** `setHealth` named a service that is not registered. Fix: register it first with `registerService`, or correct the name (the message lists the registered ones). */
  | 'KERNEL_UNKNOWN_SERVICE'
  /** `registerService` was given a name that is already registered. Fix: choose another name; a service cannot be replaced. */
  | 'KERNEL_DUPLICATE_SERVICE'
  /** A `Kernel` method or constructor was given a malformed argument or option (an unknown key, a bad priority, quota, limit, listener or response, an input that cannot be copied); `argument` names it and nothing was changed. Fix: pass the value the message describes. */
  | 'KERNEL_ARGUMENT_INVALID';

/**
 * A {@link Kernel} method was misused. See {@link KernelErrorCode} (and docs/errors.md) for each
 * code. Misuse of `resume` is checked in this order: unknown pid, state, interrupt id.
 *
 * @example
 * ```ts
 * try { kernel.resume(pid, interruptId, { text: 'yes' }) } catch (error) {
 *   if (KernelError.isInstance(error) && error.code === 'KERNEL_INVALID_STATE') console.log(`already ${error.state}`);
 * }
 * ```
 */
export class KernelError extends SignalyardError<KernelErrorCode> {
  private readonly [marker] = true;
  /** The process concerned, when there is one. */
  readonly pid?: string;
  /** The process's state (for `KERNEL_INVALID_STATE`). */
  readonly state?: ProcessState;
  /** The argument that was wrong (for `KERNEL_ARGUMENT_INVALID`), e.g. `opts.priority`. */
  readonly argument?: string;

  constructor(options: {
    code: KernelErrorCode;
    message: string;
    pid?: string;
    state?: ProcessState;
    argument?: string;
    cause?: unknown;
  }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    if (options.pid !== undefined) this.pid = options.pid;
    if (options.state !== undefined) this.state = options.state;
    if (options.argument !== undefined) this.argument = options.argument;
  }

  /** True when `error` is a `KernelError` (or a subclass), from any installed copy of the pipeline package. */
  static override isInstance(error: unknown): error is KernelError {
    return hasErrorMarker(error, marker);
  }
}

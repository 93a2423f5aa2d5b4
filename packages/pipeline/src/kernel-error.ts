import { SignalyardError, hasErrorMarker } from '@signalyard/core';
import type { ProcessState } from './process-state.js';

const marker = Symbol.for('signalyard.error.KernelError');

/** The codes a {@link KernelError} carries. */
export type KernelErrorCode =
  | 'KERNEL_UNKNOWN_PROCESS'
  | 'KERNEL_INVALID_STATE'
  | 'KERNEL_INTERRUPT_MISMATCH'
  | 'KERNEL_UNKNOWN_SERVICE'
  | 'KERNEL_DUPLICATE_SERVICE'
  | 'KERNEL_ARGUMENT_INVALID';

/**
 * A {@link Kernel} method was misused.
 *
 * - `KERNEL_UNKNOWN_PROCESS`: no process has this pid (never submitted, or already forgotten).
 * - `KERNEL_INVALID_STATE`: the process is not in a state that allows it (`resume` of a process
 *   that is not `waiting`, `reap` of one that has not terminated), or a lifecycle transition
 *   outside the table was attempted.
 * - `KERNEL_INTERRUPT_MISMATCH`: `resume` named an interrupt that is not the pending one.
 * - `KERNEL_UNKNOWN_SERVICE`: `setHealth` named a service that is not registered.
 * - `KERNEL_DUPLICATE_SERVICE`: `registerService` with a name already registered.
 * - `KERNEL_ARGUMENT_INVALID`: a malformed argument or option (the message names it).
 *
 * Misuse of `resume` is checked in this order: unknown pid, state, interrupt id.
 *
 * @example
 * ```ts
 * try { kernel.resume(pid, interruptId, { text: 'yes' }) } catch (error) {
 *   if (KernelError.isInstance(error) && error.code === 'KERNEL_INVALID_STATE') console.log(`already ${error.state}`);
 * }
 * ```
 */
export class KernelError extends SignalyardError {
  private readonly [marker] = true;
  declare readonly code: KernelErrorCode;
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

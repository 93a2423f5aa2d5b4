import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.GuardFailedError');

/** The code of {@link GuardFailedError}. */
export type GuardFailedErrorCode =
  /** A guard threw, returned a Promise (guards are synchronous), or re-entered the FSM it guards; the state is unchanged and the original error is the `cause`. Fix: make the guard a pure, synchronous function of the input. */
  'FSM_GUARD_FAILED';

/**
 * A guard threw, returned a Promise (guards are synchronous by contract), or re-entered the FSM
 * it guards (code `FSM_GUARD_FAILED`). The state is unchanged; the original error, if any, is
 * the `cause`.
 */
export class GuardFailedError extends SignalyardError<GuardFailedErrorCode> {
  private readonly [marker] = true;
  /** The state the FSM was (and still is) in. */
  readonly currentState: string;
  /** The action being executed. */
  readonly action: string;
  /** The name of the guard that failed. */
  readonly guard: string;

  constructor(options: { currentState: string; action: string; guard: string; reason: string; cause?: unknown }) {
    super({
      code: 'FSM_GUARD_FAILED',
      message: `Guard ${JSON.stringify(options.guard)} failed on ${JSON.stringify(options.action)} from ${JSON.stringify(options.currentState)}: ${options.reason}`,
      cause: options.cause,
    });
    this.currentState = options.currentState;
    this.action = options.action;
    this.guard = options.guard;
  }

  /** True when `error` is a `GuardFailedError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is GuardFailedError {
    return hasErrorMarker(error, marker);
  }
}

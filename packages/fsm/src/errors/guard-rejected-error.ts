import { SignalyardError, hasErrorMarker, transitionRefusal } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.GuardRejectedError');

/** The code of {@link GuardRejectedError}. */
export type GuardRejectedErrorCode =
  /** Transitions exist for the action from the current state, but every guard rejected the input; `guards` names them in evaluation order and the state is unchanged. A Runner reports it as a `rejected` outcome. Fix: nothing, when the refusal is intended; otherwise send input that satisfies a guard. */
  'FSM_GUARD_REJECTED';

/**
 * Transitions exist for the action from the current state, but every guard rejected the input
 * (code `FSM_GUARD_REJECTED`). The state is unchanged. `guards` names the guards tried, in
 * evaluation order.
 */
export class GuardRejectedError extends SignalyardError<GuardRejectedErrorCode> {
  private readonly [marker] = true;
  /** Marks this error as a refusal (a Runner reports it as `rejected`), not a failure. */
  readonly [transitionRefusal] = true;
  /** The state the FSM was (and still is) in. */
  readonly currentState: string;
  /** The action that was refused. */
  readonly action: string;
  /** The names of the guards evaluated, in evaluation order (descending priority, then registration). */
  readonly guards: readonly string[];

  constructor(options: { currentState: string; action: string; guards: readonly string[] }) {
    super({
      code: 'FSM_GUARD_REJECTED',
      message: `Every guard rejected ${JSON.stringify(options.action)} from ${JSON.stringify(options.currentState)}. Guards tried: ${JSON.stringify(options.guards)}`,
    });
    this.currentState = options.currentState;
    this.action = options.action;
    this.guards = options.guards;
  }

  /** True when `error` is a `GuardRejectedError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is GuardRejectedError {
    return hasErrorMarker(error, marker);
  }
}

import { SignalyardError, hasErrorMarker, transitionRefusal } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.InvalidTransitionError');

/** The code of {@link InvalidTransitionError}. */
export type InvalidTransitionErrorCode =
  /** The FSM has no transition for the action from its current state; `validActions` lists the actions that have one. A Runner reports it as a `rejected` outcome. Fix: send one of the valid actions, or add the transition to the definition. */
  'FSM_INVALID_TRANSITION';

/**
 * The FSM has no transition for the action from its current state (code
 * `FSM_INVALID_TRANSITION`). The state is unchanged. `validActions` lists the actions that have
 * at least one transition from the current state, sorted by code unit.
 */
export class InvalidTransitionError extends SignalyardError<InvalidTransitionErrorCode> {
  private readonly [marker] = true;
  /** Marks this error as a refusal (a Runner reports it as `rejected`), not a failure. */
  readonly [transitionRefusal] = true;
  /** The state the FSM was (and still is) in. */
  readonly currentState: string;
  /** The action that was refused. */
  readonly action: string;
  /** The actions with a transition from `currentState`, sorted by code unit. */
  readonly validActions: readonly string[];

  constructor(options: { currentState: string; action: string; validActions: readonly string[] }) {
    super({
      code: 'FSM_INVALID_TRANSITION',
      message: `Invalid transition from ${JSON.stringify(options.currentState)} via ${JSON.stringify(options.action)}. Valid actions: ${JSON.stringify(options.validActions)}`,
    });
    this.currentState = options.currentState;
    this.action = options.action;
    this.validActions = options.validActions;
  }

  /** True when `error` is an `InvalidTransitionError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is InvalidTransitionError {
    return hasErrorMarker(error, marker);
  }
}

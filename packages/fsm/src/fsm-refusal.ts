// Refusals of the FSM as values (`tryExecute`) and as errors (`execute`), built from the same
// fields. A refusal is an answer ("not now"), not a bug: the error built for one captures no stack
// frames. Capturing them (even one: V8's stack walk has a high fixed cost) was about 80% of the
// cost of a refused `execute`; the message, code and fields say what happened.
import type { TransitionResult } from '@signalyard/core';
import { GuardRejectedError } from './errors/guard-rejected-error.js';
import { InvalidTransitionError } from './errors/invalid-transition-error.js';

/** `tryExecute`'s refusal when no transition exists for the action from the current state. */
export interface InvalidTransitionRefusal {
  /** The code of the {@link InvalidTransitionError} `execute` throws. */
  readonly code: 'FSM_INVALID_TRANSITION';
  /** The state the FSM was (and still is) in. */
  readonly currentState: string;
  /** The refused action. */
  readonly action: string;
  /** The actions with a transition from `currentState`, sorted by code unit. */
  readonly validActions: readonly string[];
  /** The {@link InvalidTransitionError} `execute` throws for this refusal (as a method call; no stack frames). */
  toError(): InvalidTransitionError;
}

/** `tryExecute`'s refusal when transitions exist for the action but every guard rejected the input. */
export interface GuardRejectedRefusal {
  /** The code of the {@link GuardRejectedError} `execute` throws. */
  readonly code: 'FSM_GUARD_REJECTED';
  /** The state the FSM was (and still is) in. */
  readonly currentState: string;
  /** The refused action. */
  readonly action: string;
  /** The names of the guards evaluated, in evaluation order. */
  readonly guards: readonly string[];
  /** The {@link GuardRejectedError} `execute` throws for this refusal (as a method call; no stack frames). */
  toError(): GuardRejectedError;
}

/**
 * Why `FsmStrategy.tryExecute` refused an action (decisions-wave3 §7): the code and fields of
 * the error `execute` throws — {@link InvalidTransitionRefusal} (`FSM_INVALID_TRANSITION`) or
 * {@link GuardRejectedRefusal} (`FSM_GUARD_REJECTED`); switch on `code`.
 */
export type TransitionRefusal = InvalidTransitionRefusal | GuardRejectedRefusal;

/**
 * {@link TransitionRefusal} under the name the first release of `tryExecute` gave it.
 * @deprecated Use {@link TransitionRefusal}.
 */
export type FsmRefusal = TransitionRefusal;

/**
 * What `FsmStrategy.tryExecute` returns: `{ ok: true, result }` (a frozen object per
 * transition, shared like the result) or `{ ok: false, refusal }`.
 */
export type FsmAttempt =
  | {
      /** The action was executed. */
      readonly ok: true;
      /** The transition taken. */
      readonly result: TransitionResult;
    }
  | {
      /** The action was refused; the state is unchanged. */
      readonly ok: false;
      /** Why, with the fields of the error `execute` would throw. */
      readonly refusal: TransitionRefusal;
    };

/** Calls `make` with stack capture switched off (restored after, whatever happens). */
function withoutStack<E extends Error>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  if (typeof limit !== 'number' || limit === 0) return make();
  try {
    Error.stackTraceLimit = 0;
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

function invalidError(refusal: InvalidTransitionRefusal): InvalidTransitionError {
  const { currentState, action, validActions } = refusal;
  return withoutStack(() => new InvalidTransitionError({ currentState, action, validActions }));
}

function rejectedError(refusal: GuardRejectedRefusal): GuardRejectedError {
  const { currentState, action, guards } = refusal;
  return withoutStack(() => new GuardRejectedError({ currentState, action, guards }));
}

function invalidToError(this: InvalidTransitionRefusal): InvalidTransitionError {
  return invalidError(this);
}

function rejectedToError(this: GuardRejectedRefusal): GuardRejectedError {
  return rejectedError(this);
}

/** The refusal value for "no transition for `action` from `currentState`". */
export function invalidTransition(
  currentState: string,
  action: string,
  validActions: readonly string[],
): InvalidTransitionRefusal {
  return { code: 'FSM_INVALID_TRANSITION', currentState, action, validActions, toError: invalidToError };
}

/** The refusal value for "every guard rejected `action` from `currentState`". */
export function guardRejected(currentState: string, action: string, guards: readonly string[]): GuardRejectedRefusal {
  return { code: 'FSM_GUARD_REJECTED', currentState, action, guards, toError: rejectedToError };
}

/** The error `execute` throws for `refusal` (without stack frames). */
export function refusalError(refusal: TransitionRefusal): InvalidTransitionError | GuardRejectedError {
  return refusal.code === 'FSM_INVALID_TRANSITION' ? invalidError(refusal) : rejectedError(refusal);
}

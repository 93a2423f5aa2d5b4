import type { GuardCondition } from './guard.js';

/** Options of {@link FsmStrategyBuilder.transition}. */
export interface TransitionOptions {
  /** A named guard, or a function (named `guard#N` after its `transition()` call's 0-based index). */
  readonly guard?: GuardCondition | ((input: unknown) => boolean);
  /** An integer, default 0: higher is tried first; ties go to the transition registered first. */
  readonly priority?: number;
}

/** Options of {@link FsmStrategyBuilder.state}. */
export interface StateOptions {
  /** No transition may leave a final state. */
  readonly final?: boolean;
  /** What the state means, for people reading the definition. */
  readonly description?: string;
}

/** Options of {@link FsmStrategyBuilder.route}. */
export interface RouteOptions {
  /** The route matches only while the FSM instance is in one of these states. */
  readonly inStates?: readonly string[];
}

/** Options objects are optional; `null` from JavaScript callers counts as none. */
export function options<T extends object>(opts: T | undefined | null): Partial<T> {
  return typeof opts === 'object' && opts !== null ? opts : {};
}

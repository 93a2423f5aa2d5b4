import { hasErrorMarker } from './signalyard-error.js';

/**
 * The marker an {@link ExecutionStrategy}'s error carries when `execute` **refused** the action —
 * it is not allowed now (no transition from the current state, or every guard said no) — as
 * opposed to failing (a guard or hook threw). A Runner reports a refusal as a `rejected` outcome
 * and any other error as `failed`. A `Symbol.for` key, so it works across installed copies.
 *
 * @example
 * ```ts
 * class NotNowError extends SignalyardError<'MY_STRATEGY_REFUSED'> {
 *   readonly [transitionRefusal] = true;
 * }
 * ```
 */
export const transitionRefusal: unique symbol = Symbol.for('signalyard.transitionRefusal');

/**
 * True when `error` is a refusal by a strategy (it carries {@link transitionRefusal}): the FSM's
 * `InvalidTransitionError` and `GuardRejectedError`, or a custom strategy's error marked the same way.
 *
 * @example
 * ```ts
 * try {
 *   strategy.execute('approve');
 * } catch (error) {
 *   if (isTransitionRefusal(error)) console.log('not allowed now');
 *   else throw error;
 * }
 * ```
 */
export function isTransitionRefusal(error: unknown): boolean {
  return hasErrorMarker(error, transitionRefusal);
}

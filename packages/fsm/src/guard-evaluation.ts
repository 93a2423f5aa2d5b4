// Evaluating the guards of one (state, action) candidate list, safely: a guard that throws, returns
// a Promise, or calls back into the FSM it guards fails the decision with a GuardFailedError
// naming it; the state is never changed here (the caller writes it).
import { errorText } from '@signalyard/core/internal';
import { GuardFailedError } from './errors/guard-failed-error.js';
import type { CandidateList, CompiledTransition } from './internal.js';

/** `decide`'s answer when the candidate list is empty. */
export const NO_ENTRY = 0;
/** `decide`'s answer when every guard rejected the input. */
export const REJECTED = 1;

const isThenable = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

/** The guard evaluation of one FSM instance: which action's guard runs now, and what it called back. */
export class GuardEvaluation {
  /** The action whose guard is being evaluated, while one is. */
  evaluating: string | undefined = undefined;
  /** What a guard called on the FSM while being evaluated (`execute("x")`, `restore()`), if it did. */
  #reentered: string | undefined = undefined;

  /**
   * Records that a guard called `call` on the FSM it guards (so the decision under way fails too,
   * even if the guard swallows the error) and returns the error that call throws.
   */
  refuse(call: string, state: string, action: string): GuardFailedError {
    this.#reentered = call;
    return reentryError(state, action, '(re-entered)', call);
  }

  /**
   * Picks the transition to take from `list` (in evaluation order): the first without a guard or
   * whose guard returns exactly `true`; else REJECTED (every guard said no) or NO_ENTRY.
   * @throws GuardFailedError when a guard threw, returned a Promise or re-entered the FSM.
   */
  decide(
    list: CandidateList,
    action: string,
    input: unknown,
    state: string,
  ): CompiledTransition | typeof NO_ENTRY | typeof REJECTED {
    const candidates = list.transitions;
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[i] as CompiledTransition;
      const guard = c.guard;
      if (guard === undefined) return c;
      let passed: unknown;
      this.evaluating = action;
      this.#reentered = undefined;
      try {
        passed = guard.evaluate(input);
      } catch (error) {
        const reentered = this.#takeReentry();
        if (reentered !== undefined) throw reentryError(state, action, c.guardName as string, reentered);
        throw new GuardFailedError({
          currentState: state,
          action,
          guard: c.guardName as string,
          reason: `it threw: ${errorText(error)}`,
          cause: error,
        });
      } finally {
        this.evaluating = undefined;
      }
      const reentered = this.#takeReentry();
      if (reentered !== undefined) throw reentryError(state, action, c.guardName as string, reentered);
      if (passed === true) return c;
      if (passed !== false && isThenable(passed)) {
        // Never leave a rejected guard promise unhandled: the guard has already failed.
        Promise.resolve(passed).catch(() => undefined);
        throw new GuardFailedError({
          currentState: state,
          action,
          guard: c.guardName as string,
          reason: 'it returned a Promise; guards must be synchronous',
        });
      }
    }
    return candidates.length === 0 ? NO_ENTRY : REJECTED;
  }

  /** What a guard called on the FSM during its evaluation (set by a nested call), cleared. */
  #takeReentry(): string | undefined {
    const reentered = this.#reentered;
    this.#reentered = undefined;
    return reentered;
  }
}

/** `call`: what the guard called on its FSM, e.g. `execute("go")` or `restore()`. */
function reentryError(state: string, action: string, guard: string, call: string): GuardFailedError {
  return new GuardFailedError({
    currentState: state,
    action,
    guard,
    reason: `a guard re-entered the FSM it guards by calling ${call} (guards must be pure: they must not execute transitions or restore snapshots)`,
  });
}

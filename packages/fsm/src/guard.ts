import { describeValue } from '@signalyard/core';
import { FsmDefinitionError } from './errors/fsm-definition-error.js';

/**
 * A named, synchronous condition on a transition's input. Only a result of exactly `true`
 * lets the transition through. Names appear in errors, `TransitionResult.guard` and diagrams.
 */
export interface GuardCondition {
  /** Shown in errors, `TransitionResult.guard` and diagrams. */
  readonly name: string;
  /** Decides from the transition's input; only exactly `true` allows it. Synchronous and pure. */
  evaluate(input: unknown): boolean;
}

/**
 * A {@link GuardCondition} from a name and a function.
 *
 * @example
 * ```ts
 * const quality = new ClosureGuard('quality', (input) => (input as { quality: number }).quality > 0.5);
 * builder.transition('planning', 'review', 'executing', { guard: quality, priority: 10 });
 * ```
 */
export class ClosureGuard implements GuardCondition {
  /** Shown in errors, `TransitionResult.guard` and diagrams. */
  readonly name: string;
  readonly #fn: (input: unknown) => boolean;

  /** @throws FsmDefinitionError `FSM_DEFINITION_INVALID` when `name` is empty or `fn` is not a function. */
  constructor(name: string, fn: (input: unknown) => boolean) {
    const problems: string[] = [];
    if (typeof name !== 'string' || name === '')
      problems.push(`ClosureGuard name ${describeValue(name)} must be a non-empty string`);
    if (typeof fn !== 'function')
      problems.push(`ClosureGuard ${describeValue(name)} needs a function, got ${describeValue(fn)}`);
    if (problems.length > 0) throw new FsmDefinitionError({ problems });
    this.name = name;
    this.#fn = fn;
  }

  /** Calls the function with `input`. */
  evaluate(input: unknown): boolean {
    return this.#fn(input);
  }
}

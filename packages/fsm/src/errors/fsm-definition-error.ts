import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.FsmDefinitionError');

/** The code of {@link FsmDefinitionError}. */
export type FsmDefinitionErrorCode =
  /** An FSM definition is invalid (no initial state, a transition from or to an unknown state, duplicate or malformed guards and routes); `problems` lists every problem found by `build()` / `define()`. Fix: correct each listed problem in the builder calls. */
  'FSM_DEFINITION_INVALID';

/**
 * An FSM definition is invalid (code `FSM_DEFINITION_INVALID`). `problems` lists **every**
 * problem found by `build()` / `define()`, not just the first.
 */
export class FsmDefinitionError extends SignalyardError<FsmDefinitionErrorCode> {
  private readonly [marker] = true;
  /** Every problem found, in the order checked. */
  readonly problems: readonly string[];

  constructor(options: { problems: readonly string[] }) {
    const problems = Object.freeze([...options.problems]);
    super({
      code: 'FSM_DEFINITION_INVALID',
      message: `Invalid FSM definition (${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    });
    this.problems = problems;
  }

  /** True when `error` is an `FsmDefinitionError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is FsmDefinitionError {
    return hasErrorMarker(error, marker);
  }
}

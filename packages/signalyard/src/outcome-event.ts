import type { Outcome, SessionCause, Signal } from '@signalyard/core';

/**
 * The `outcome` event: its own shape is `{ type, outcome }`; the signal rides along
 * non-enumerably, read through the prototype, for plugins that need it (the audit log, tracing) —
 * and so does the final save's `cause` (the cassette recorder) —
 * no `defineProperty` per event.
 * @internal
 */
export class OutcomeEvent {
  readonly type = 'outcome' as const;
  readonly outcome: Outcome;
  readonly #signal: Signal;
  readonly #cause: SessionCause | undefined;

  constructor(outcome: Outcome, signal: Signal, cause?: SessionCause) {
    this.outcome = outcome;
    this.#signal = signal;
    this.#cause = cause;
  }

  /** The cause the signal's final save recorded (with its `summary`), when there was one. */
  get cause(): SessionCause | undefined {
    return this.#cause;
  }

  /** The signal this outcome is for. */
  get signal(): Signal {
    return this.#signal;
  }
}

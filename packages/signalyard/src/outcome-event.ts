import type { Outcome, Signal } from '@signalyard/core';

/**
 * The `outcome` event: its own shape is `{ type, outcome }`; the signal rides along
 * non-enumerably, read through the prototype, for plugins that need it (the audit log, tracing) —
 * no `defineProperty` per event.
 * @internal
 */
export class OutcomeEvent {
  readonly type = 'outcome' as const;
  readonly outcome: Outcome;
  readonly #signal: Signal;

  constructor(outcome: Outcome, signal: Signal) {
    this.outcome = outcome;
    this.#signal = signal;
  }

  /** The signal this outcome is for. */
  get signal(): Signal {
    return this.#signal;
  }
}

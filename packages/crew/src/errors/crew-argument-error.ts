import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CrewArgumentError');

/** The codes of {@link CrewArgumentError}. */
export type CrewArgumentErrorCode =
  /** `matchLevel`, `signalMatches` or `new SignalMatcher(signals)` was given a signal that is not a string, or `SignalMatcher` a `signals` that is not a list. Nothing was matched. Fix: pass signals as strings such as `"[DONE]"` (and a list of them to `SignalMatcher`); check them with `isValidSignal`. */
  | 'CREW_SIGNAL_INVALID'
  /** `matchLevel`, `signalMatches` or a `SignalMatcher`'s `first` / `matchAll` was given reply content that is not a string. Fix: pass the model reply's `content` text. */
  | 'CREW_CONTENT_INVALID'
  /** `CrewExecutor.transcript` was given a history that is not a list of ChatMessages (the message names the first bad entry). Nothing was returned. Fix: pass the history a crew state keeps (`CrewState.history`, or a session's history). */
  | 'CREW_HISTORY_INVALID';

/**
 * A crew signal-matching function (or `CrewExecutor.visibleText` / `transcript`) was called with
 * an argument it cannot take: a signal, a list of signals, a reply content or a history of the
 * wrong type. The message names the bad value and what was
 * expected, and {@link CrewArgumentError.value} holds it; matching never throws a `TypeError`.
 *
 * @example
 * ```ts
 * try {
 *   matchLevel(signal, content);
 * } catch (error) {
 *   if (CrewArgumentError.isInstance(error)) console.error(error.code); // CREW_SIGNAL_INVALID
 * }
 * ```
 */
export class CrewArgumentError extends SignalyardError<CrewArgumentErrorCode> {
  private readonly [marker] = true;
  /** The argument that was rejected. */
  readonly value: unknown;

  constructor(options: { code: CrewArgumentErrorCode; message: string; value: unknown }) {
    super({ code: options.code, message: options.message });
    this.value = options.value;
  }

  /** True when `error` is a `CrewArgumentError`, from any installed copy of the crew package. */
  static override isInstance(error: unknown): error is CrewArgumentError {
    return hasErrorMarker(error, marker);
  }
}

import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.AbortedError');

/** The code of {@link AbortedError}. */
export type AbortedErrorCode =
  /** A run was stopped by the `abortSignal` its caller passed (or by a stop, a timeout or a close that fires one); the reason is the error's `cause`. Fix: nothing, when you aborted on purpose; otherwise find who fired the signal (a deadline, `force_stop`, `close()`). */
  'ABORTED';

/**
 * A run was stopped by an `AbortSignal` (code `ABORTED`).
 *
 * Every long-running Signalyard entry point takes `{ abortSignal }` and rejects with this error
 * (or reports it as an outcome) when that signal fires. The abort reason is kept as `cause`.
 */
export class AbortedError extends SignalyardError<AbortedErrorCode> {
  private readonly [marker] = true;

  constructor(options: { message?: string; cause?: unknown } = {}) {
    super({ code: 'ABORTED', message: options.message ?? 'The operation was aborted', cause: options.cause });
  }

  /** True when `error` is an `AbortedError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is AbortedError {
    return hasErrorMarker(error, marker);
  }
}

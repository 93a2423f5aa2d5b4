import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.AbortedError');

/**
 * A run was stopped by an `AbortSignal` (code `ABORTED`).
 *
 * Every long-running Signalyard entry point takes `{ abortSignal }` and rejects with this error
 * (or reports it as an outcome) when that signal fires. The abort reason is kept as `cause`.
 */
export class AbortedError extends SignalyardError {
  private readonly [marker] = true;

  constructor(options: { message?: string; cause?: unknown } = {}) {
    super({ code: 'ABORTED', message: options.message ?? 'The operation was aborted', cause: options.cause });
  }

  /** True when `error` is an `AbortedError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is AbortedError {
    return hasErrorMarker(error, marker);
  }
}

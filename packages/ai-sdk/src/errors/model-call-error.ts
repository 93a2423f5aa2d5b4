import { SignalyardError, hasErrorMarker } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';

const marker = Symbol.for('signalyard.error.ModelCallError');

/** The code of {@link ModelCallError}. */
export type ModelCallErrorCode =
  /** A language model call failed at the provider or in the AI SDK: a network or HTTP error, a rejected API key, a rate limit that outlasted the retries, a response the SDK could not read; the original error is the `cause` (`statusCode` when HTTP). Fix: check the provider key, model id and quota; the `cause` has the provider's message. */
  'MODEL_CALL_FAILED';

/**
 * A language model call failed at the provider or in the AI SDK (code `MODEL_CALL_FAILED`):
 * a network or HTTP error, a rejected API key, a rate limit that outlasted the AI SDK's
 * retries, a response the SDK could not read. The original error is the `cause`.
 *
 * Aborts are not model failures: a call stopped by its request's `abortSignal` rejects with
 * core's `AbortedError` (`ABORTED`) instead.
 *
 * @example
 * ```ts
 * try {
 *   await model.generate({ messages });
 * } catch (error) {
 *   if (ModelCallError.isInstance(error) && error.statusCode === 429) await backOff();
 *   else throw error;
 * }
 * ```
 */
export class ModelCallError extends SignalyardError<ModelCallErrorCode> {
  private readonly [marker] = true;
  /** The model that failed, as the adapter knows it: `provider/modelId`, or the model id string. */
  readonly model: string;
  /**
   * The HTTP status the provider answered with, when the failure was an HTTP error (the AI SDK's
   * `APICallError`, also when it is the last error of a `RetryError`).
   */
  declare readonly statusCode?: number;

  constructor(options: { model: string; cause: unknown; statusCode?: number }) {
    const why = errorText(options.cause);
    super({
      code: 'MODEL_CALL_FAILED',
      message: `Model call to ${options.model} failed: ${why}`,
      cause: options.cause,
    });
    this.model = options.model;
    if (options.statusCode !== undefined) (this as { statusCode?: number }).statusCode = options.statusCode;
  }

  /** True when `error` is a `ModelCallError` (or a subclass), from any installed copy of the package. */
  static override isInstance(error: unknown): error is ModelCallError {
    return hasErrorMarker(error, marker);
  }
}

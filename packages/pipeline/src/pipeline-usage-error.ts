import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PipelineUsageError');

/** The codes a {@link PipelineUsageError} carries. */
export type PipelineUsageErrorCode =
  'PIPELINE_ARGUMENT_INVALID' | 'PIPELINE_MODE_UNSUPPORTED' | 'PIPELINE_ENVELOPE_INVALID';

/**
 * A pipeline API was called with a bad argument.
 *
 * - `PIPELINE_ARGUMENT_INVALID`: a malformed option (`envelopeId`, `abortSignal`, `timeoutMs`,
 *   `bounds`), a resume response that is not an object, an unknown interrupt kind given to
 *   `ctx.interrupt`, a bad count given to `ctx.countToolCall`, or something other than a
 *   `Pipeline` given to `PipelineRuntime`.
 * - `PIPELINE_MODE_UNSUPPORTED`: a run mode this runtime does not run. This version runs both
 *   modes (`sequential` and `parallel`), so it does not raise it; an unknown mode is
 *   `PIPELINE_ARGUMENT_INVALID`.
 * - `PIPELINE_ENVELOPE_INVALID`: `Envelope.fromJSON` was given something that is not an
 *   envelope's JSON (the message names the path and the value), or an envelope does not belong
 *   to the pipeline it is resumed with.
 *
 * @example
 * ```ts
 * try { Envelope.fromJSON(JSON.parse(text)) } catch (error) {
 *   if (PipelineUsageError.isInstance(error)) console.error(error.message);   // names the bad path
 * }
 * ```
 */
export class PipelineUsageError extends SignalyardError {
  private readonly [marker] = true;
  declare readonly code: PipelineUsageErrorCode;
  /** The argument or path that was wrong, e.g. `opts.mode` or `trace[2].stage`. */
  readonly argument: string;

  constructor(options: { code: PipelineUsageErrorCode; argument: string; message: string }) {
    super({ code: options.code, message: options.message });
    this.argument = options.argument;
  }

  /** True when `error` is a `PipelineUsageError` (or a subclass), from any installed copy of the pipeline package. */
  static override isInstance(error: unknown): error is PipelineUsageError {
    return hasErrorMarker(error, marker);
  }
}

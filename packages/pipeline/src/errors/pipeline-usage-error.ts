import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PipelineUsageError');

/** The codes of {@link PipelineUsageError}. */
export type PipelineUsageErrorCode =
  /** A pipeline API was given a malformed argument: a bad option of `PipelineRuntime`, `run`, `resume` or their streams (an unknown key, `mode`, `envelopeId`, `abortSignal`, `timeoutMs`, `bounds`, `model`, `maxTraceEntries`), a resume response that is not an object, an input, payload or response that cannot be copied (reading it throws), an unknown interrupt kind given to `ctx.interrupt`, a bad count given to `ctx.countToolCall`, a model request that is not an object, or something other than a `Pipeline` given to `PipelineRuntime`; `argument` names it. Fix: pass the value the message describes (plain data for inputs and payloads). */
  | 'PIPELINE_ARGUMENT_INVALID'
  /** A run mode this runtime does not run. This release runs both modes (`sequential` and `parallel`) and never raises it; an unknown mode is `PIPELINE_ARGUMENT_INVALID`. Fix: use `mode: 'sequential'` or `mode: 'parallel'`. */
  | 'PIPELINE_MODE_UNSUPPORTED'
  /** `Envelope.fromJSON` was given something that is not an envelope's JSON (the message names the first bad path and value), or an envelope does not belong to the pipeline it is resumed with. Fix: pass what `envelope.toJSON()` (or `JSON.parse` of `JSON.stringify(envelope)`) produced, and resume with the runtime of the pipeline that made it. */
  | 'PIPELINE_ENVELOPE_INVALID';

/**
 * A pipeline API was called with a bad argument (see {@link PipelineUsageErrorCode}).
 *
 * @example
 * ```ts
 * try { Envelope.fromJSON(JSON.parse(text)) } catch (error) {
 *   if (PipelineUsageError.isInstance(error)) console.error(error.message);   // names the bad path
 * }
 * ```
 */
export class PipelineUsageError extends SignalyardError<PipelineUsageErrorCode> {
  private readonly [marker] = true;
  /** The argument or path that was wrong, e.g. `opts.mode` or `trace[2].stage`. */
  readonly argument: string;

  constructor(options: { code: PipelineUsageErrorCode; argument: string; message: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    this.argument = options.argument;
  }

  /** True when `error` is a `PipelineUsageError` (or a subclass), from any installed copy of the pipeline package. */
  static override isInstance(error: unknown): error is PipelineUsageError {
    return hasErrorMarker(error, marker);
  }
}

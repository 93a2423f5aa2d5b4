import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PipelineStageError');

/** The codes a {@link PipelineStageError} carries. */
export type PipelineStageErrorCode =
  'PIPELINE_STAGE_OUTPUT_INVALID' | 'PIPELINE_STAGE_TIMEOUT' | 'PIPELINE_ROUTING_FAILED' | 'PIPELINE_INTERRUPTED';

/**
 * Why a stage failed, when the runtime (not the stage's own code) detected it. These errors are
 * recorded in `envelope.errors` with their code, never thrown out of `run`:
 *
 * - `PIPELINE_STAGE_OUTPUT_INVALID`: the stage returned something other than a plain object or
 *   `undefined`.
 * - `PIPELINE_STAGE_TIMEOUT`: the stage ran longer than its `timeoutMs`; it is also the
 *   `reason` of the stage's aborted `ctx.abortSignal`.
 * - `PIPELINE_ROUTING_FAILED`: evaluating a routing rule against the output threw (a getter
 *   inside the output threw).
 * - `PIPELINE_INTERRUPTED`: thrown by `ctx.interrupt` to unwind the stage; the run pauses even
 *   if the stage catches it.
 *
 * @example
 * ```ts
 * const timedOut = envelope.errors.some((e) => e.code === 'PIPELINE_STAGE_TIMEOUT');
 * ```
 */
export class PipelineStageError extends SignalyardError {
  private readonly [marker] = true;
  declare readonly code: PipelineStageErrorCode;
  /** The stage concerned. */
  readonly stage: string;

  constructor(options: { code: PipelineStageErrorCode; stage: string; message: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    this.stage = options.stage;
  }

  /** True when `error` is a `PipelineStageError` (or a subclass), from any installed copy of the pipeline package. */
  static override isInstance(error: unknown): error is PipelineStageError {
    return hasErrorMarker(error, marker);
  }
}

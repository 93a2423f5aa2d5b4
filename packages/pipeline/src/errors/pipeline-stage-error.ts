import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PipelineStageError');

/** The codes of {@link PipelineStageError}: recorded in `envelope.errors`, never thrown out of `run`. */
export type PipelineStageErrorCode =
  /** A stage returned something other than a plain object or `undefined` (or reading its output threw); the stage fails and goes to `errorNext`. Fix: return a plain object (its keys are the output), or nothing. */
  | 'PIPELINE_STAGE_OUTPUT_INVALID'
  /** A stage ran longer than its `timeoutMs`: its `ctx.abortSignal` fired with this error and the stage failed. Fix: make the stage honour `ctx.abortSignal` and finish sooner, or raise its `timeoutMs`. */
  | 'PIPELINE_STAGE_TIMEOUT'
  /** Comparing a routing rule's value with the stage's output threw (a getter inside the output threw); the stage fails. Fix: return plain data from the stage (no throwing getters or proxies). */
  | 'PIPELINE_ROUTING_FAILED'
  /** Thrown by `ctx.interrupt` to unwind the stage; the run pauses on the interrupt even if the stage catches it. Fix: nothing: let it propagate; answer the interrupt with `resume`. */
  | 'PIPELINE_INTERRUPTED';

/**
 * Why a stage failed, when the runtime (not the stage's own code) detected it. These errors are
 * recorded in `envelope.errors` with their code, never thrown out of `run` (see
 * {@link PipelineStageErrorCode}); `PIPELINE_STAGE_TIMEOUT` is also the `reason` of the stage's
 * aborted `ctx.abortSignal`, and `PIPELINE_INTERRUPTED` is what `ctx.interrupt` throws.
 *
 * @example
 * ```ts
 * const timedOut = envelope.errors.some((e) => e.code === 'PIPELINE_STAGE_TIMEOUT');
 * ```
 */
export class PipelineStageError extends SignalyardError<PipelineStageErrorCode> {
  private readonly [marker] = true;
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

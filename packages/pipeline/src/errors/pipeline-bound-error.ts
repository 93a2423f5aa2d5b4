import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PipelineBoundError');

/** The code of {@link PipelineBoundError}. */
export type PipelineBoundErrorCode =
  /** Inside a stage, a `ctx.model.generate` call would exceed `maxLlmCalls`, or a `ctx.countToolCall` would exceed a kernel quota's `maxToolCalls`; the call is refused and the run ends after the stage (`max_llm_calls_exceeded` / `max_tool_calls_exceeded`), even if the stage catches the error. Fix: raise the pipeline's `maxLlmCalls` (or the run's `bounds`, or the process's quota), or make the stage call less. */
  'PIPELINE_BOUND_EXCEEDED';

/** A bound that a call inside a stage can exceed. */
export type CallBound = 'maxLlmCalls' | 'maxToolCalls';

/**
 * A call made inside a stage was refused because it would exceed a bound (code
 * `PIPELINE_BOUND_EXCEEDED`): a `ctx.model.generate` call over `maxLlmCalls`, or a
 * `ctx.countToolCall` over a kernel quota's `maxToolCalls`.
 *
 * The refused call is not counted. The run ends after the stage with `terminated: true` and
 * `terminalReason` `max_llm_calls_exceeded` (or `max_tool_calls_exceeded`) **even if the stage
 * catches this error**: catching it lets a stage clean up, not carry on past the bound.
 *
 * @example
 * ```ts
 * run: async (ctx) => {
 *   try { return { draft: (await ctx.model!.generate({ messages })).content } }
 *   catch (error) { if (PipelineBoundError.isInstance(error)) return { draft: '' }; throw error }
 * }
 * ```
 */
export class PipelineBoundError extends SignalyardError<PipelineBoundErrorCode> {
  private readonly [marker] = true;
  /** The bound that refused the call. */
  readonly bound: CallBound;
  /** Its value: at most this many calls per run. */
  readonly limit: number;
  /** The stage that made the call. */
  readonly stage: string;

  constructor(options: { bound: CallBound; limit: number; stage: string }) {
    const what = options.bound === 'maxLlmCalls' ? 'model call' : 'tool call';
    super({
      code: 'PIPELINE_BOUND_EXCEEDED',
      message: `Stage ${JSON.stringify(options.stage)}: ${what} refused, it would exceed ${options.bound} ${options.limit}`,
    });
    this.bound = options.bound;
    this.limit = options.limit;
    this.stage = options.stage;
  }

  /** True when `error` is a `PipelineBoundError` (or a subclass), from any installed copy of the pipeline package. */
  static override isInstance(error: unknown): error is PipelineBoundError {
    return hasErrorMarker(error, marker);
  }
}

import type { ChatModel } from '@signalyard/core';
import type { Envelope } from '../envelope/envelope.js';
import type { InterruptKind, InterruptResponse } from '../envelope/interrupt.js';

/**
 * What a stage's `run` receives: the run's input, the outputs so far, the envelope, an abort
 * signal, the model (counted), the answer to its interrupt when resumed, and the means to raise
 * an interrupt and report tool calls.
 *
 * @example
 * ```ts
 * const draft: StageConfig = {
 *   name: 'draft',
 *   run: async (ctx) => {
 *     let text = '';
 *     // each delta is also a `stage_delta` event for whoever streams the run
 *     for await (const part of ctx.model!.stream({ messages: [{ role: 'user', content: 'Write a haiku' }] })) {
 *       if (part.type === 'text-delta') text += part.delta;
 *     }
 *     return { text };
 *   },
 * };
 *
 * const intent: StageConfig = {
 *   name: 'intent',
 *   run: async (ctx) => {
 *     if (ctx.response?.text !== undefined) return { goal: ctx.response.text };
 *     const reply = await ctx.model!.generate({ messages: [{ role: 'user', content: String(ctx.input) }], abortSignal: ctx.abortSignal });
 *     if (reply.content === '?') ctx.interrupt('clarification', { question: 'What do you mean?' });
 *     return { goal: reply.content };
 *   },
 * };
 * ```
 */
export interface StageContext {
  /** The stage running. */
  readonly stage: string;
  /**
   * The run's input: a deep, frozen copy of what was given to `run` (plain objects and arrays are
   * copied; other objects, such as class instances, are shared as they are).
   */
  readonly input: unknown;
  /** Outputs so far, by output key: read-only, frozen all the way down. */
  readonly outputs: Readonly<Record<string, unknown>>;
  /** A read-only snapshot of the whole envelope as it stands while this stage runs. */
  readonly envelope: Envelope;
  /** Fires when the run is cancelled or this stage's `timeoutMs` passes. */
  readonly abortSignal: AbortSignal;
  /**
   * The runtime's model, when it has one. Each call — a `generate()`, or a `stream()` (one call
   * per stream, counted when `stream()` is called) — counts toward `maxLlmCalls`; a call that
   * would exceed it rejects with `PipelineBoundError` (`PIPELINE_BOUND_EXCEEDED`) — for
   * `stream()`, its first `next()` does — and the run ends `max_llm_calls_exceeded`, even if the
   * stage catches the error. Requests without an `abortSignal` get this stage's, and without an
   * `agentId` get the stage name; a request that is not an object rejects with
   * `PipelineUsageError` (`PIPELINE_ARGUMENT_INVALID`).
   *
   * `stream` is always there: it reads the model as core's `streamChat` does (the model's own
   * `stream`, or its `generate` reply as parts, checked). Each text delta the stage reads is also
   * a `stage_delta` event of the run's stream, before this stage's `stage_end`.
   */
  readonly model?: Required<ChatModel>;
  /** The answer to the interrupt this run was resumed from; set only for the first stage run after `resume`. */
  readonly response?: InterruptResponse;
  /**
   * Raises an interrupt: the run pauses after this stage (`terminated: false`, `interrupt` set)
   * until `resume` answers it. The interrupt keeps a deep, frozen copy of `payload`. Throws a `PipelineStageError` (`PIPELINE_INTERRUPTED`) to unwind
   * the stage; the run pauses even if the stage catches it. The stage's output is not stored.
   *
   * @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` when `kind` is not an {@link InterruptKind}
   *   or `payload` cannot be copied (reading it throws).
   */
  interrupt(kind: InterruptKind, payload?: unknown): never;
  /**
   * Reports `n` (default 1) tool calls. They count toward a kernel quota's `maxToolCalls`; a count
   * that would exceed it throws `PipelineBoundError` and the run ends `max_tool_calls_exceeded`.
   *
   * @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` when `n` is not a non-negative integer.
   */
  countToolCall(n?: number): void;
}

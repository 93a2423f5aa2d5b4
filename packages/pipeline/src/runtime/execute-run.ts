import { linkAbort, startTimer } from '@signalyard/core/internal';
import { AbortedError, systemClock, type ChatModel } from '@signalyard/core';
import type { CompiledPipeline } from '../definition/compiled-pipeline.js';
import type { Envelope } from '../envelope/envelope.js';
import { runDag } from './dag/dag-loop.js';
import type { PipelineEvent } from './pipeline-event.js';
import type { PreparedRun } from './prepare-run.js';
import { cancel } from './run-ending.js';
import type { RunScope } from './run-scope.js';
import { envelopeFromState } from './run-state.js';
import { runSequential } from './sequential-loop.js';

/** What a run executes with, besides its prepared state. @internal */
export interface ExecuteContext {
  readonly pipeline: CompiledPipeline;
  readonly model: ChatModel | undefined;
  /** Receives the run's events (a stream's consumer); `undefined` when nobody listens. */
  readonly emit: ((event: PipelineEvent) => void) | undefined;
  /** Fires when a stream's consumer stops reading. */
  readonly streamSignal: AbortSignal | undefined;
}

/**
 * Executes a prepared run to its end (completed, paused or terminated) and returns the final
 * envelope; emits `end` last. The run's signal is aborted by the caller's `abortSignal`, the
 * stream's consumer stopping, or the run's `timeoutMs` (then it ends `timeout_exceeded`).
 * Never rejects for anything a stage does.
 * @internal
 */
export async function executeRun(prepared: PreparedRun, context: ExecuteContext): Promise<Envelope> {
  const { state, start, opts, control } = prepared;
  control?.onState?.(state);
  const sink = eventSink(control?.onEvent, context.emit);
  if (start !== undefined) {
    const scope = newScope(prepared, context, sink);
    const controller = scope.controller;
    const unlinks = [linkAbort(controller, opts.abortSignal), linkAbort(controller, context.streamSignal)];
    const timeoutMs = opts.timeoutMs;
    const stopTimer =
      timeoutMs === undefined || controller.signal.aborted
        ? undefined
        : startTimer(timeoutMs, () => {
            if (controller.signal.aborted) return;
            scope.timedOut = true;
            controller.abort(new AbortedError({ message: `the run timed out after ${timeoutMs} ms` }));
          });
    try {
      // `run` and `resume` return their promise before any stage runs.
      await Promise.resolve();
      if (controller.signal.aborted) cancel(scope, 'stage' in start ? start.stage.name : state.currentStage);
      else if ('mode' in start) await runDag(scope, start);
      else await runSequential(scope, start);
    } finally {
      stopTimer?.();
      for (const unlink of unlinks) unlink();
    }
  }
  const envelope = envelopeFromState(state);
  if (sink !== undefined) sink({ type: 'end', envelope });
  return envelope;
}

/** The run's scope, with the effective bounds (the pipeline's, tightened by the run's `bounds`). */
function newScope(
  prepared: PreparedRun,
  context: ExecuteContext,
  emit: ((event: PipelineEvent) => void) | undefined,
): RunScope & { readonly controller: AbortController } {
  const bounds = context.pipeline.bounds;
  const runBounds = prepared.opts.bounds;
  const control = prepared.control;
  const controller = new AbortController();
  return {
    controller,
    pipeline: context.pipeline,
    state: prepared.state,
    model: context.model,
    clock: prepared.clock,
    systemTime: prepared.clock === systemClock,
    maxIterations: Math.min(bounds.maxIterations, runBounds?.maxIterations ?? Infinity),
    maxLlmCalls: Math.min(bounds.maxLlmCalls, runBounds?.maxLlmCalls ?? Infinity),
    maxAgentHops: Math.min(bounds.maxAgentHops, runBounds?.maxAgentHops ?? Infinity),
    maxToolCalls: control?.maxToolCalls ?? Infinity,
    toolCalls: control?.toolCalls ?? { used: 0 },
    signal: controller.signal,
    emit,
    timedOut: false,
    llmRefused: false,
    toolRefused: false,
  };
}

/** One sink for the control's tap and the stream's consumer, or `undefined` when nobody listens. */
function eventSink(
  onEvent: ((event: PipelineEvent) => void) | undefined,
  emit: ((event: PipelineEvent) => void) | undefined,
): ((event: PipelineEvent) => void) | undefined {
  if (onEvent === undefined) return emit;
  if (emit === undefined) return onEvent;
  return (event) => {
    onEvent(event);
    emit(event);
  };
}

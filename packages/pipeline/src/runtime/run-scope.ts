import type { ChatModel, Clock } from '@signalyard/core';
import { readClock } from '@signalyard/core/internal';
import type { CompiledPipeline } from '../definition/compiled-pipeline.js';
import type { PipelineEvent } from './pipeline-event.js';
import type { RunState } from './run-state.js';

/**
 * Everything one invocation (`run`, `resume` or their streams) works with, in either mode: the state, the effective bounds (the pipeline's, tightened by run options and quotas),
 * the run's abort signal, counters that live outside the envelope, and the event sink.
 * @internal
 */
export interface RunScope {
  readonly pipeline: CompiledPipeline;
  readonly state: RunState;
  readonly model: ChatModel | undefined;
  /** Where the run reads the time it records. */
  readonly clock: Clock;
  /**
   * True when `clock` is the system clock: its readings then also serve the run's time slice
   * (see TimeSlice), which otherwise reads the system time itself (a clock a test drives may
   * stand still, and a run must still let the event loop run).
   */
  readonly systemTime: boolean;
  readonly maxIterations: number;
  readonly maxLlmCalls: number;
  readonly maxAgentHops: number;
  readonly maxToolCalls: number;
  readonly toolCalls: { used: number };
  /** Fires when the run is cancelled, times out, or its stream's consumer stops. */
  readonly signal: AbortSignal;
  /** `undefined` when nobody listens, so no event is allocated. */
  readonly emit: ((event: PipelineEvent) => void) | undefined;
  /** Set when the run's `timeoutMs` fired (then cancellation means `timeout_exceeded`). */
  timedOut: boolean;
  /** A model call was refused by `maxLlmCalls` during the run. */
  llmRefused: boolean;
  /** A tool call count was refused by `maxToolCalls` during the run. */
  toolRefused: boolean;
}

/**
 * The run's clock, read: `Date.now()` itself when the run's clock is `systemClock` (whose `now`
 * is exactly that: a stage step reads the clock, and this keeps the hot path a plain call).
 * @throws InvalidArgumentError `CLOCK_INVALID` when a clock of the caller's returns no time.
 * @internal
 */
export function runClockNow(scope: Pick<RunScope, 'clock' | 'systemTime'>): number {
  return scope.systemTime ? Date.now() : readClock(scope.clock);
}

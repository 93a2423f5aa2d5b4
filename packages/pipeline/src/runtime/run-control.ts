import type { Clock } from '@signalyard/core';
import type { PipelineEvent } from './pipeline-event.js';
import type { RunState } from './run-state.js';

/**
 * The key under which trusted callers in this package (the kernel) pass a {@link RunControl}
 * in the options of `run`, `stream`, `resume` and `resumeStream`. Not exported from the package:
 * `Symbol()` (not `Symbol.for`), so nothing outside this copy can forge it.
 * @internal
 */
export const RUN_CONTROL: unique symbol = Symbol('signalyard.pipeline.runControl');

/**
 * Extra controls for one run, beyond the public options (which already carry `abortSignal`,
 * `timeoutMs` and tightening `bounds`): a tool-call counter that lives across `run` and `resume`
 * (the kernel keeps it per process), its limit, and an event tap.
 * @internal
 */
export interface RunControl {
  /** The tool calls counted so far; `ctx.countToolCall` adds to `used`. */
  readonly toolCalls?: { used: number };
  /** At most this many tool calls (quota `maxToolCalls`); default unlimited. */
  readonly maxToolCalls?: number;
  /** Receives every event of the run, as `stream` would yield it. */
  readonly onEvent?: (event: PipelineEvent) => void;
  /** Receives the run's live state as the run starts (the kernel reads its counters while it runs). */
  readonly onState?: (state: Readonly<RunState>) => void;
  /** The clock the run reads instead of its runtime's (the kernel's). */
  readonly clock?: Clock;
}

/** The control in `opts`, if any. @internal */
export function runControlOf(opts: unknown): RunControl | undefined {
  if (typeof opts !== 'object' || opts === null) return undefined;
  return (opts as { [RUN_CONTROL]?: RunControl })[RUN_CONTROL];
}

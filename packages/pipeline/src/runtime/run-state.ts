import { setData } from '@signalyard/core/internal';
import { copyRecord } from '../envelope/copy-record.js';
import { createEnvelope, type Envelope } from '../envelope/envelope.js';
import type { PipelineMode, StageErrorRecord, TraceEntry } from '../envelope/envelope-json.js';
import type { Interrupt, ResolvedInterrupt } from '../envelope/interrupt.js';
import type { TerminalReason } from '../envelope/terminal-reason.js';

/**
 * The mutable state of one run while it executes. The runtime turns it into an immutable
 * {@link Envelope} when the run stops (handing over its containers), and builds a fresh one
 * from an envelope to resume it, so no envelope is ever changed.
 * @internal
 */
export interface RunState {
  id: string;
  input: unknown;
  outputs: Record<string, unknown>;
  /**
   * A frozen copy of `outputs` as they stand, made when a stage first reads `ctx.outputs` and
   * shared by every stage that reads them before the next output is stored (which clears it).
   */
  outputsView: Readonly<Record<string, unknown>> | undefined;
  currentStage: string;
  iteration: number;
  llmCalls: number;
  agentHops: number;
  edgeTraversals: Record<string, number>;
  terminated: boolean;
  terminalReason: TerminalReason | undefined;
  terminationReason: string | undefined;
  interrupt: Interrupt | undefined;
  resolvedInterrupts: ResolvedInterrupt[];
  errors: StageErrorRecord[];
  /** The most recent stage executions (between `traceCap` and twice as many: see {@link recordTrace}). */
  trace: TraceEntry[];
  /** How many of the oldest trace entries were dropped. */
  droppedTraceEntries: number;
  /** At most this many trace entries reach the envelope (the runtime's `maxTraceEntries`). */
  traceCap: number;
  mode: PipelineMode;
  completedStages: string[];
  skippedStages: string[];
  /** The names in `completedStages`, for a constant-time check. */
  completed: Set<string>;
}

/** A fresh state for a new run. @internal */
export function newRunState(
  id: string,
  input: unknown,
  mode: PipelineMode,
  firstStage: string,
  traceCap = Infinity,
): RunState {
  return {
    id,
    input,
    outputs: {},
    outputsView: undefined,
    currentStage: firstStage,
    iteration: 0,
    llmCalls: 0,
    agentHops: 0,
    edgeTraversals: {},
    terminated: false,
    terminalReason: undefined,
    terminationReason: undefined,
    interrupt: undefined,
    resolvedInterrupts: [],
    errors: [],
    trace: [],
    droppedTraceEntries: 0,
    traceCap,
    mode,
    completedStages: [],
    skippedStages: [],
    completed: new Set(),
  };
}

/**
 * A state continuing `env`, with fresh containers (the envelope is not touched; its input and
 * outputs are deep, frozen copies, so they are shared, not copied). @internal
 */
export function runStateFrom(env: Envelope, traceCap = Infinity): RunState {
  return {
    id: env.id,
    input: env.input,
    outputs: copyRecord(env.outputs),
    outputsView: env.outputs,
    currentStage: env.currentStage,
    iteration: env.iteration,
    llmCalls: env.llmCalls,
    agentHops: env.agentHops,
    edgeTraversals: copyRecord(env.edgeTraversals),
    terminated: env.terminated,
    terminalReason: env.terminalReason,
    terminationReason: env.terminationReason,
    interrupt: env.interrupt,
    resolvedInterrupts: [...env.resolvedInterrupts],
    errors: [...env.errors],
    trace: [...env.trace],
    droppedTraceEntries: env.droppedTraceEntries ?? 0,
    traceCap,
    mode: env.mode,
    completedStages: [...env.completedStages],
    skippedStages: [...env.skippedStages],
    completed: new Set(env.completedStages),
  };
}

/** The final envelope of a stopped run; takes ownership of the state's containers. @internal */
export function envelopeFromState(st: RunState): Envelope {
  trimTrace(st, st.traceCap);
  return createEnvelope({
    id: st.id,
    input: st.input,
    outputs: st.outputs,
    currentStage: st.currentStage,
    iteration: st.iteration,
    llmCalls: st.llmCalls,
    agentHops: st.agentHops,
    edgeTraversals: st.edgeTraversals,
    terminated: st.terminated,
    ...(st.terminalReason === undefined ? {} : { terminalReason: st.terminalReason }),
    ...(st.terminationReason === undefined ? {} : { terminationReason: st.terminationReason }),
    ...(st.interrupt === undefined ? {} : { interrupt: st.interrupt }),
    resolvedInterrupts: st.resolvedInterrupts,
    errors: st.errors,
    trace: st.trace,
    ...(st.droppedTraceEntries === 0 ? {} : { droppedTraceEntries: st.droppedTraceEntries }),
    mode: st.mode,
    completedStages: st.completedStages,
    skippedStages: st.skippedStages,
  });
}

/** An envelope of the state as it stands, copying its containers (the run goes on). @internal */
export function snapshotEnvelope(st: RunState): Envelope {
  return envelopeFromState({
    ...st,
    outputs: copyRecord(st.outputs),
    edgeTraversals: copyRecord(st.edgeTraversals),
    resolvedInterrupts: [...st.resolvedInterrupts],
    errors: [...st.errors],
    trace: [...st.trace],
    completedStages: [...st.completedStages],
    skippedStages: [...st.skippedStages],
  });
}

/** The output stored under `key`, if any. @internal */
export function storedOutput(st: RunState, key: string): unknown {
  return Object.hasOwn(st.outputs, key) ? st.outputs[key] : undefined;
}

/** Stores a stage's output (frozen) under `key` (storing the output it holds again changes nothing). @internal */
export function storeOutput(st: RunState, key: string, output: Readonly<Record<string, unknown>>): void {
  if (storedOutput(st, key) === output) return;
  setData(st.outputs, key, output);
  st.outputsView = undefined;
}

/** The outputs as they stand, frozen: one copy shared by every reader until the next output is stored. @internal */
export function outputsView(st: RunState): Readonly<Record<string, unknown>> {
  return (st.outputsView ??= Object.freeze(copyRecord(st.outputs)));
}

/** Ends the run. @internal */
export function terminate(
  st: RunState,
  reason: TerminalReason,
  message: string | undefined,
  currentStage: string,
): void {
  st.terminated = true;
  st.terminalReason = reason;
  st.terminationReason = message;
  st.currentStage = currentStage;
}

/**
 * Appends a stage execution (a frozen entry) to the trace. The trace keeps the most recent `traceCap` entries:
 * it may grow to twice that (at least 64 more) before the oldest are cut, so the cost stays
 * constant per entry; the envelope gets exactly the cap. @internal
 */
export function recordTrace(st: RunState, entry: TraceEntry): void {
  const trace = st.trace;
  trace.push(entry);
  const cap = st.traceCap;
  if (trace.length > cap && trace.length >= cap + Math.max(cap, 64)) trimTrace(st, cap);
}

function trimTrace(st: RunState, cap: number): void {
  const extra = st.trace.length - cap;
  if (extra <= 0) return;
  st.trace.splice(0, extra);
  st.droppedTraceEntries += extra;
}

import {
  copyRecord,
  createEnvelope,
  type Envelope,
  type PipelineMode,
  type StageErrorRecord,
  type TraceEntry,
} from './envelope.js';
import type { Interrupt, ResolvedInterrupt } from './interrupt.js';
import type { TerminalReason } from './terminal-reason.js';

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
  trace: TraceEntry[];
  mode: PipelineMode;
  completedStages: string[];
  skippedStages: string[];
  /** The names in `completedStages`, for a constant-time check. */
  completed: Set<string>;
}

/** A fresh state for a new run. @internal */
export function newRunState(id: string, input: unknown, mode: PipelineMode, firstStage: string): RunState {
  return {
    id,
    input,
    outputs: {},
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
    mode,
    completedStages: [],
    skippedStages: [],
    completed: new Set(),
  };
}

/** A state continuing `env`, with fresh containers (the envelope is not touched). @internal */
export function runStateFrom(env: Envelope): RunState {
  return {
    id: env.id,
    input: env.input,
    outputs: copyRecord(env.outputs),
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
    mode: env.mode,
    completedStages: [...env.completedStages],
    skippedStages: [...env.skippedStages],
    completed: new Set(env.completedStages),
  };
}

/** The final envelope of a stopped run; takes ownership of the state's containers. @internal */
export function envelopeFromState(st: RunState): Envelope {
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

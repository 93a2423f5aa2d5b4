import type { Interrupt, ResolvedInterrupt } from './interrupt.js';
import type { TerminalReason } from './terminal-reason.js';

/** How a run schedules its stages: one after another by routing, or as a DAG by `requires`. */
export type PipelineMode = 'sequential' | 'parallel';

/** A stage failure, as recorded in `envelope.errors` (with or without `errorNext`). */
export interface StageErrorRecord {
  /** The stage that failed. */
  stage: string;
  /** The error's message. */
  error: string;
  /** The error's `code`, when it had a string one. */
  code?: string;
  /** When the stage ended (ISO 8601). */
  at: string;
}

/** One stage execution, as recorded in `envelope.trace`. */
export interface TraceEntry {
  /** The stage that ran. */
  stage: string;
  /** ISO 8601. */
  startedAt: string;
  /** ISO 8601. */
  endedAt: string;
  /** Where routing sent the run: a stage, `end`, or an interrupt kind. */
  next: string;
}

/** The JSON form of an {@link Envelope}: what `toJSON()` returns and `Envelope.fromJSON` accepts. */
export interface EnvelopeJSON {
  /** The run's id. */
  id: string;
  /** The run's input. */
  input: unknown;
  /** The latest output of each stage, by output key. */
  outputs: Record<string, unknown>;
  /** The stage running, paused at, or that ended the run; `end` once completed. */
  currentStage: string;
  /** Loop-backs so far (toward `maxIterations`). */
  iteration: number;
  /** Model calls so far (toward `maxLlmCalls`). */
  llmCalls: number;
  /** Stage executions so far (toward `maxAgentHops`). */
  agentHops: number;
  /** Traversals of each edge, by `"from->to"`. */
  edgeTraversals: Record<string, number>;
  /** Whether the run is over, however it ended. */
  terminated: boolean;
  /** How it ended, once over. */
  terminalReason?: TerminalReason;
  /** A readable detail of how it ended. */
  terminationReason?: string;
  /** What the paused run waits on. */
  interrupt?: Interrupt;
  /** The interrupts answered so far, with their answers. */
  resolvedInterrupts: ResolvedInterrupt[];
  /** Every stage failure. */
  errors: StageErrorRecord[];
  /** The most recent stage executions, oldest first. */
  trace: TraceEntry[];
  /** How many of the oldest trace entries were dropped to keep the trace within its cap; absent when none were. */
  droppedTraceEntries?: number;
  /** `sequential` or `parallel` (DAG mode). */
  mode: PipelineMode;
  /** The stages that succeeded, each once. */
  completedStages: string[];
  /** DAG mode: the stages skipped. */
  skippedStages: string[];
}

/** Every key of {@link EnvelopeJSON}, in the documented order. @internal */
const ENVELOPE_KEYS: readonly (keyof EnvelopeJSON)[] = Object.freeze([
  'id',
  'input',
  'outputs',
  'currentStage',
  'iteration',
  'llmCalls',
  'agentHops',
  'edgeTraversals',
  'terminated',
  'terminalReason',
  'terminationReason',
  'interrupt',
  'resolvedInterrupts',
  'errors',
  'trace',
  'droppedTraceEntries',
  'mode',
  'completedStages',
  'skippedStages',
]);

/** The envelope's JSON with its keys in the documented order (optional keys only when present). @internal */
export function orderEnvelopeKeys(json: EnvelopeJSON): EnvelopeJSON {
  const source = json as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ENVELOPE_KEYS) if (key in json) out[key] = source[key];
  return out as unknown as EnvelopeJSON;
}

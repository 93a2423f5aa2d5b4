import { copyRecord } from './copy-record.js';
import {
  orderEnvelopeKeys,
  type EnvelopeJSON,
  type PipelineMode,
  type StageErrorRecord,
  type TraceEntry,
} from './envelope-json.js';
import { parseEnvelopeJSON } from './envelope-schema.js';
import type { Interrupt, ResolvedInterrupt } from './interrupt.js';
import type { TerminalReason } from './terminal-reason.js';

const brand = Symbol.for('signalyard.pipeline.Envelope');

let construct: (fields: EnvelopeJSON) => Envelope;

/**
 * The state of one pipeline run: its input, every stage's output, counters, edge traversals,
 * how it ended or what it waits on, errors and a trace. Immutable: the runtime returns a new
 * envelope from every `run` and `resume`, and never changes one it returned.
 *
 * `terminated` means the run is over, however it ended (`terminalReason` says how; a run that
 * reached `end` has `terminalReason: 'completed'` and `currentStage: 'end'`). A paused run has
 * `terminated: false` and `interrupt` set; `resume` continues it.
 *
 * Envelopes are obtained from `PipelineRuntime` or from stored JSON with
 * {@link Envelope.fromJSON}; `Envelope.fromJSON(env.toJSON())` equals `env`, and so does
 * `Envelope.fromJSON(JSON.parse(JSON.stringify(env)))` when the input and outputs are JSON.
 *
 * @example
 * ```ts
 * const env = await runtime.run('Write a haiku about trains');
 * if (env.interrupt !== undefined) await db.save(env.id, JSON.stringify(env));
 * // later, in another process:
 * const stored = Envelope.fromJSON(JSON.parse(await db.load(id)));
 * const done = await runtime.resume(stored, { text: 'steam trains' });
 * ```
 */
export class Envelope {
  /** Unique id of the run (a UUID unless `envelopeId` was given). */
  declare readonly id: string;
  /** The run's input: a deep, frozen copy of what was given to `run` (plain objects and arrays are copied; other objects are kept as they are). */
  declare readonly input: unknown;
  /** Every stage's latest output, by output key (frozen all the way down). */
  declare readonly outputs: Record<string, unknown>;
  /** The stage running, paused at, or that ended the run; `end` once completed. DAG mode: the last stage started. */
  declare readonly currentStage: string;
  /** Loop-backs so far (transitions to an earlier stage in stage order); always 0 in DAG mode. */
  declare readonly iteration: number;
  /** Model calls so far. */
  declare readonly llmCalls: number;
  /** Stage executions so far. */
  declare readonly agentHops: number;
  /** Traversals per edge, keyed `"from->to"`. */
  declare readonly edgeTraversals: Record<string, number>;
  /** True once the run is over, however it ended. */
  declare readonly terminated: boolean;
  /** How the run ended, when `terminated`. */
  declare readonly terminalReason?: TerminalReason;
  /** A human-readable detail of how it ended, e.g. `edge limit exceeded: review->draft`. */
  declare readonly terminationReason?: string;
  /** The interrupt the run is paused on. */
  declare readonly interrupt?: Interrupt;
  /** Interrupts answered by `resume`, oldest first, each with its response. */
  declare readonly resolvedInterrupts: readonly ResolvedInterrupt[];
  /** Every stage failure, oldest first. */
  declare readonly errors: readonly StageErrorRecord[];
  /**
   * Stage executions, oldest first: the most recent ones, at most the runtime's
   * `maxTraceEntries` (default 1,000); {@link Envelope.droppedTraceEntries} counts the older ones
   * dropped.
   */
  declare readonly trace: readonly TraceEntry[];
  /** How many of the oldest trace entries were dropped to keep the trace within its cap; absent when none were. */
  declare readonly droppedTraceEntries?: number;
  /** The mode the run was started in. */
  declare readonly mode: PipelineMode;
  /** Stages that have succeeded, each once, in order of first success. */
  declare readonly completedStages: readonly string[];
  /** DAG mode: stages skipped because a requirement failed. */
  declare readonly skippedStages: readonly string[];

  /** Takes ownership of `f`'s containers and freezes them. */
  private constructor(f: EnvelopeJSON) {
    const self = this as unknown as Record<string, unknown>;
    self.id = f.id;
    self.input = f.input;
    self.outputs = Object.freeze(f.outputs);
    self.currentStage = f.currentStage;
    self.iteration = f.iteration;
    self.llmCalls = f.llmCalls;
    self.agentHops = f.agentHops;
    self.edgeTraversals = Object.freeze(f.edgeTraversals);
    self.terminated = f.terminated;
    if (f.terminalReason !== undefined) self.terminalReason = f.terminalReason;
    if (f.terminationReason !== undefined) self.terminationReason = f.terminationReason;
    if (f.interrupt !== undefined) self.interrupt = Object.freeze(f.interrupt);
    for (const r of f.resolvedInterrupts) Object.freeze(r.response);
    self.resolvedInterrupts = freezeAll(f.resolvedInterrupts);
    self.errors = freezeAll(f.errors);
    self.trace = Object.freeze(f.trace); // its entries are frozen when made (see createEnvelope)
    if (f.droppedTraceEntries !== undefined && f.droppedTraceEntries > 0)
      self.droppedTraceEntries = f.droppedTraceEntries;
    self.mode = f.mode;
    self.completedStages = Object.freeze(f.completedStages);
    self.skippedStages = Object.freeze(f.skippedStages);
    Object.freeze(this);
  }

  static {
    construct = (fields) => new Envelope(fields);
    // Marks envelopes across installed copies: on the prototype, so it is not an own property.
    Object.defineProperty(Envelope.prototype, brand, { value: true });
  }

  /**
   * True when `value` is an `Envelope`, from any installed copy of the pipeline package.
   *
   * @example
   * ```ts
   * if (Envelope.isInstance(event.envelope)) console.log(event.envelope.terminalReason);
   * ```
   */
  static isInstance(value: unknown): value is Envelope {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /**
   * The envelope as a plain, JSON-ready object (fresh containers; input, outputs, payloads and
   * responses by reference: they are deep, frozen copies). `JSON.stringify(envelope)` uses it.
   *
   * @example
   * ```ts
   * await store.save(`run:${env.id}`, env.toJSON(), version);
   * ```
   */
  toJSON(): EnvelopeJSON {
    const json: EnvelopeJSON = {
      id: this.id,
      input: this.input,
      outputs: copyRecord(this.outputs),
      currentStage: this.currentStage,
      iteration: this.iteration,
      llmCalls: this.llmCalls,
      agentHops: this.agentHops,
      edgeTraversals: copyRecord(this.edgeTraversals),
      terminated: this.terminated,
      resolvedInterrupts: [],
      errors: this.errors.map((e) => ({ ...e })),
      trace: this.trace.map((t) => ({ ...t })),
      mode: this.mode,
      completedStages: [...this.completedStages],
      skippedStages: [...this.skippedStages],
    };
    if (this.terminalReason !== undefined) json.terminalReason = this.terminalReason;
    if (this.terminationReason !== undefined) json.terminationReason = this.terminationReason;
    if (this.interrupt !== undefined) json.interrupt = { ...this.interrupt };
    if (this.droppedTraceEntries !== undefined) json.droppedTraceEntries = this.droppedTraceEntries;
    json.resolvedInterrupts = this.resolvedInterrupts.map((r) => ({ ...r, response: { ...r.response } }));
    return orderEnvelopeKeys(json);
  }

  /**
   * Rebuilds an envelope from its JSON form (the object `toJSON()` returns, or `JSON.parse` of
   * the string `JSON.stringify(envelope)` produced). Validates every field and copies every
   * container, deeply (input, outputs, payloads and responses become deep, frozen copies), so
   * later changes to `json` do not affect the envelope.
   *
   * @throws PipelineUsageError `PIPELINE_ENVELOPE_INVALID` naming the first bad path and value
   *   (unknown keys included) when `json` is not an envelope's JSON.
   * @example
   * ```ts
   * const env = Envelope.fromJSON(JSON.parse(text));
   * ```
   */
  static fromJSON(json: unknown): Envelope {
    return construct(parseEnvelopeJSON(json));
  }
}

/** Builds an envelope from trusted fields, taking ownership of their containers (whose trace entries are frozen already). @internal */
export function createEnvelope(fields: EnvelopeJSON): Envelope {
  return construct(fields);
}

function freezeAll<T extends object>(list: T[]): readonly T[] {
  for (let i = 0; i < list.length; i++) Object.freeze(list[i]);
  return Object.freeze(list);
}

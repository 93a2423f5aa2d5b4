import { describeValue } from '@signalyard/core';
import {
  INTERRUPT_KINDS,
  isInterruptKind,
  type Interrupt,
  type InterruptResponse,
  type ResolvedInterrupt,
} from './interrupt.js';
import { PipelineUsageError } from './pipeline-usage-error.js';
import { TERMINAL_REASONS, type TerminalReason } from './terminal-reason.js';

/** How a run schedules its stages: one after another by routing, or as a DAG by `requires`. */
export type PipelineMode = 'sequential' | 'parallel';

/** A stage failure, as recorded in `envelope.errors` (with or without `errorNext`). */
export interface StageErrorRecord {
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
  id: string;
  input: unknown;
  outputs: Record<string, unknown>;
  currentStage: string;
  iteration: number;
  llmCalls: number;
  agentHops: number;
  edgeTraversals: Record<string, number>;
  terminated: boolean;
  terminalReason?: TerminalReason;
  terminationReason?: string;
  interrupt?: Interrupt;
  resolvedInterrupts: ResolvedInterrupt[];
  errors: StageErrorRecord[];
  trace: TraceEntry[];
  mode: PipelineMode;
  completedStages: string[];
  skippedStages: string[];
}

const brand = Symbol.for('signalyard.pipeline.Envelope');
const KEYS: ReadonlySet<string> = new Set([
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
  'mode',
  'completedStages',
  'skippedStages',
]);
const REASONS: ReadonlySet<string> = new Set(TERMINAL_REASONS);

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
  /** The run's input. */
  declare readonly input: unknown;
  /** Every stage's latest output, by output key. */
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
  /** Every stage execution, oldest first. */
  declare readonly trace: readonly TraceEntry[];
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
    self.trace = freezeAll(f.trace);
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
   * The envelope as a plain, JSON-ready object (fresh containers; input, outputs and payloads by
   * reference). `JSON.stringify(envelope)` uses it.
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
    json.resolvedInterrupts = this.resolvedInterrupts.map((r) => ({ ...r, response: { ...r.response } }));
    return reorder(json);
  }

  /**
   * Rebuilds an envelope from its JSON form (the object `toJSON()` returns, or `JSON.parse` of
   * the string `JSON.stringify(envelope)` produced). Validates every field and copies every
   * container, so later changes to `json` do not affect the envelope.
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

/** @internal Builds an envelope from trusted fields, taking ownership of their containers. */
export function createEnvelope(fields: EnvelopeJSON): Envelope {
  return construct(fields);
}

function freezeAll<T extends object>(list: T[]): readonly T[] {
  for (let i = 0; i < list.length; i++) Object.freeze(list[i]);
  return Object.freeze(list);
}

/** A plain-object copy of `record` that keeps a `__proto__` key as data. */
export function copyRecord<V>(record: Readonly<Record<string, V>>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const key of Object.keys(record)) {
    const value = record[key] as V;
    if (key === '__proto__')
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

/** Puts the optional keys at their documented position (after `terminated`), for readable JSON. */
function reorder(json: EnvelopeJSON): EnvelopeJSON {
  const out = {} as Record<string, unknown>;
  for (const key of KEYS) if (key in json) out[key] = (json as unknown as Record<string, unknown>)[key];
  return out as unknown as EnvelopeJSON;
}

// ------------------------------------------------------------------------------ validation

function invalid(path: string, value: unknown, expected: string): PipelineUsageError {
  return new PipelineUsageError({
    code: 'PIPELINE_ENVELOPE_INVALID',
    argument: path,
    message: `Invalid envelope JSON at ${path === '' ? '(root)' : path}: got ${describeValue(value)}, expected ${expected}`,
  });
}

function asRecord(value: unknown, path: string, expected = 'an object'): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(path, value, expected);
  return value as Record<string, unknown>;
}

function str(o: Record<string, unknown>, key: string, path: string, nonEmpty = false): string {
  const v = o[key];
  if (typeof v !== 'string' || (nonEmpty && v === ''))
    throw invalid(path + key, v, nonEmpty ? 'a non-empty string' : 'a string');
  return v;
}

function isoTime(o: Record<string, unknown>, key: string, path: string): string {
  const v = o[key];
  if (typeof v !== 'string' || Number.isNaN(Date.parse(v)))
    throw invalid(path + key, v, 'an ISO 8601 timestamp string');
  return v;
}

function count(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw invalid(path, value, 'a non-negative integer');
  return value;
}

function list<T>(value: unknown, path: string, item: (v: unknown, p: string) => T): T[] {
  if (!Array.isArray(value)) throw invalid(path, value, 'an array');
  const out: T[] = [];
  for (let i = 0; i < value.length; i++) out.push(item(value[i], `${path}[${i}]`));
  return out;
}

function onlyKeys(o: Record<string, unknown>, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(o)) {
    if (!allowed.includes(key)) throw invalid(`${path}${key}`, o[key], `no such key (allowed: ${allowed.join(', ')})`);
  }
}

const INTERRUPT_KEYS = ['id', 'kind', 'stage', 'payload', 'createdAt', 'expiresAt'];

function parseInterrupt(value: unknown, path: string, resolved: boolean): Interrupt | ResolvedInterrupt {
  const o = asRecord(value, path);
  const p = `${path}.`;
  onlyKeys(o, resolved ? [...INTERRUPT_KEYS, 'response', 'resolvedAt'] : INTERRUPT_KEYS, p);
  if (!isInterruptKind(o.kind)) throw invalid(`${p}kind`, o.kind, `one of ${INTERRUPT_KINDS.join(', ')}`);
  const out: Record<string, unknown> = { id: str(o, 'id', p, true), kind: o.kind, stage: str(o, 'stage', p, true) };
  if (o.payload !== undefined) out.payload = o.payload;
  out.createdAt = isoTime(o, 'createdAt', p);
  if (o.expiresAt !== undefined) out.expiresAt = isoTime(o, 'expiresAt', p);
  if (resolved) {
    out.response = { ...parseResponse(o.response, `${p}response`) };
    out.resolvedAt = isoTime(o, 'resolvedAt', p);
  }
  return out as unknown as Interrupt;
}

/** Validates an interrupt response (also used by `resume`). */
export function parseResponse(
  value: unknown,
  path: string,
  code: 'PIPELINE_ENVELOPE_INVALID' | 'PIPELINE_ARGUMENT_INVALID' = 'PIPELINE_ENVELOPE_INVALID',
): InterruptResponse {
  const fail = (at: string, v: unknown, expected: string): PipelineUsageError =>
    code === 'PIPELINE_ENVELOPE_INVALID'
      ? invalid(at, v, expected)
      : new PipelineUsageError({
          code,
          argument: at,
          message: `Invalid ${at} ${describeValue(v)}: expected ${expected}`,
        });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw fail(path, value, 'an object { text?, approved?, decision?, data? }');
  }
  const o = value as Record<string, unknown>;
  if (o.text !== undefined && typeof o.text !== 'string') throw fail(`${path}.text`, o.text, 'a string');
  if (o.approved !== undefined && typeof o.approved !== 'boolean')
    throw fail(`${path}.approved`, o.approved, 'a boolean');
  if (o.decision !== undefined && typeof o.decision !== 'string')
    throw fail(`${path}.decision`, o.decision, 'a string');
  return o;
}

function parseEnvelopeJSON(json: unknown): EnvelopeJSON {
  const o = asRecord(json, '', 'an envelope JSON object');
  for (const key of Object.keys(o)) if (!KEYS.has(key)) throw invalid(key, o[key], 'no such envelope key');
  const outputs = copyRecord(asRecord(o.outputs, 'outputs'));
  const edges = copyRecord(asRecord(o.edgeTraversals, 'edgeTraversals'));
  for (const key of Object.keys(edges)) count(edges[key], `edgeTraversals[${JSON.stringify(key)}]`);
  if (typeof o.terminated !== 'boolean') throw invalid('terminated', o.terminated, 'a boolean');
  const terminated = o.terminated;
  if (o.mode !== 'sequential' && o.mode !== 'parallel') throw invalid('mode', o.mode, '"sequential" or "parallel"');
  const out: EnvelopeJSON = {
    id: str(o, 'id', '', true),
    input: o.input,
    outputs,
    currentStage: str(o, 'currentStage', '', true),
    iteration: count(o.iteration, 'iteration'),
    llmCalls: count(o.llmCalls, 'llmCalls'),
    agentHops: count(o.agentHops, 'agentHops'),
    edgeTraversals: edges as Record<string, number>,
    terminated,
    resolvedInterrupts: list(
      o.resolvedInterrupts,
      'resolvedInterrupts',
      (v, p) => parseInterrupt(v, p, true) as ResolvedInterrupt,
    ),
    errors: list(o.errors, 'errors', (v, p) => {
      const e = asRecord(v, p);
      onlyKeys(e, ['stage', 'error', 'code', 'at'], `${p}.`);
      const rec: StageErrorRecord = { stage: str(e, 'stage', `${p}.`), error: str(e, 'error', `${p}.`), at: '' };
      if (e.code !== undefined) rec.code = str(e, 'code', `${p}.`);
      rec.at = isoTime(e, 'at', `${p}.`);
      return rec;
    }),
    trace: list(o.trace, 'trace', (v, p) => {
      const t = asRecord(v, p);
      onlyKeys(t, ['stage', 'startedAt', 'endedAt', 'next'], `${p}.`);
      return {
        stage: str(t, 'stage', `${p}.`, true),
        startedAt: isoTime(t, 'startedAt', `${p}.`),
        endedAt: isoTime(t, 'endedAt', `${p}.`),
        next: str(t, 'next', `${p}.`, true),
      };
    }),
    mode: o.mode,
    completedStages: list(o.completedStages, 'completedStages', (v, p) => stringItem(v, p)),
    skippedStages: list(o.skippedStages, 'skippedStages', (v, p) => stringItem(v, p)),
  };
  if (terminated) {
    if (typeof o.terminalReason !== 'string' || !REASONS.has(o.terminalReason)) {
      throw invalid(
        'terminalReason',
        o.terminalReason,
        `a terminal reason (${TERMINAL_REASONS.join(', ')}) since terminated is true`,
      );
    }
    out.terminalReason = o.terminalReason as TerminalReason;
    if (o.interrupt !== undefined) throw invalid('interrupt', o.interrupt, 'no interrupt on a terminated envelope');
  } else if (o.terminalReason !== undefined) {
    throw invalid('terminalReason', o.terminalReason, 'no terminal reason since terminated is false');
  }
  if (o.terminationReason !== undefined) out.terminationReason = str(o, 'terminationReason', '');
  if (o.interrupt !== undefined) out.interrupt = parseInterrupt(o.interrupt, 'interrupt', false);
  return reorder(out);
}

function stringItem(value: unknown, path: string): string {
  if (typeof value !== 'string' || value === '') throw invalid(path, value, 'a non-empty string');
  return value;
}

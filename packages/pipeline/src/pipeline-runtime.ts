import { AbortedError, describeValue, type ChatModel } from '@signalyard/core';
import { Envelope, parseResponse } from './envelope.js';
import { eventStream } from './event-stream.js';
import type { InterruptResponse, ResolvedInterrupt } from './interrupt.js';
import { isoNow } from './iso-now.js';
import { compiledPipeline, Pipeline, type CompiledPipeline, type CompiledStage } from './pipeline.js';
import type { PipelineEvent } from './pipeline-event.js';
import { PipelineStateError } from './pipeline-state-error.js';
import { PipelineUsageError } from './pipeline-usage-error.js';
import { runControlOf, type RunControl } from './run-control.js';
import { cancel, runSequential, type StartPoint } from './run-engine.js';
import { checkDagEnvelope, NEW_DAG_RUN, runDag, type DagStart } from './run-dag.js';
import type { RunScope } from './run-scope.js';
import { envelopeFromState, newRunState, runStateFrom, terminate, type RunState } from './run-state.js';
import type { PipelineMode } from './envelope.js';

/** Options of {@link PipelineRuntime}'s constructor. */
export interface PipelineRuntimeOptions {
  /** The model stages reach as `ctx.model` (each call counted toward `maxLlmCalls`). */
  model?: ChatModel;
}

/** Per-run tightening of the pipeline's bounds: for each, the smaller of the two applies. */
export interface RunBounds {
  maxIterations?: number;
  maxLlmCalls?: number;
  maxAgentHops?: number;
}

/** Options of {@link PipelineRuntime.resume} and {@link PipelineRuntime.resumeStream}. */
export interface ResumeOptions {
  /** Cancels the run: it ends `terminated: true`, `terminalReason: 'user_cancelled'`, and the stage in flight is aborted. */
  abortSignal?: AbortSignal;
  /** A deadline for this call, in ms: when it passes the run ends `timeout_exceeded` (the stage in flight is aborted). */
  timeoutMs?: number;
  /** Tightens the pipeline's bounds for this run (counters continue from the envelope). */
  bounds?: RunBounds;
}

/** Options of {@link PipelineRuntime.run} and {@link PipelineRuntime.stream}. */
export interface RunOptions extends ResumeOptions {
  /**
   * `sequential` (default): stages run one after another by routing. `parallel` (DAG mode): each
   * stage runs at most once, as soon as its `requires` / `after` allow, concurrently with the
   * other ready stages; routing settings are not used.
   */
  mode?: PipelineMode;
  /** The new envelope's id. Default: a random UUID. */
  envelopeId?: string;
}

/** setTimeout's largest delay; larger ones fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;
const RESUME_KEYS: readonly string[] = ['abortSignal', 'timeoutMs', 'bounds'];
const RUN_KEYS: readonly string[] = [...RESUME_KEYS, 'mode', 'envelopeId'];

/** A run ready to execute: its state, where it starts, and its options. */
interface PreparedRun {
  readonly state: RunState;
  readonly start: StartPoint | DagStart | undefined; // undefined: the run already ended (a denied confirmation)
  readonly opts: ResumeOptions;
  readonly control: RunControl | undefined;
}

/**
 * Runs a {@link Pipeline}: `run` / `stream` start a run from the first stage; `resume` /
 * `resumeStream` continue a run paused on an interrupt. Stateless between calls (everything a
 * run needs is in its {@link Envelope}), so one runtime serves any number of concurrent runs.
 *
 * Sequential mode: each stage's output is stored under its output key; a failure (throw,
 * `timeoutMs`, an output that is not a plain object, a truthy `error` field) is recorded in
 * `envelope.errors` and goes to `errorNext`, else ends the run `stage_failed`; otherwise the
 * first matching routing rule, else `defaultNext` (default `end`), decides. Bounds mean "at
 * most N": a transition that an edge limit, `maxIterations` or `maxAgentHops` refuses ends the
 * run (reasons in that precedence), as does a model call over `maxLlmCalls`. Routing to
 * `clarification` / `confirmation`, or `ctx.interrupt(kind)`, pauses the run.
 *
 * `run` and `resume` never reject because of what a stage did: every outcome is in the returned
 * envelope. They reject only for bad arguments ({@link PipelineUsageError}) and, for `resume`,
 * an envelope that cannot be resumed ({@link PipelineStateError}).
 *
 * @example
 * ```ts
 * const runtime = new PipelineRuntime(pipeline, { model });
 * let env = await runtime.run({ question: 'Which train?' });
 * while (env.interrupt?.kind === 'clarification') env = await runtime.resume(env, { text: await ask(env.interrupt.payload) });
 * console.log(env.terminalReason, env.outputs);
 * ```
 */
export class PipelineRuntime {
  /** The pipeline this runtime runs. */
  readonly pipeline: Pipeline;
  /** The model stages reach as `ctx.model`. */
  declare readonly model?: ChatModel;
  readonly #compiled: CompiledPipeline;

  /**
   * @param pipeline What `definePipeline` returned.
   * @param options `model`: the model stages reach as `ctx.model`.
   * @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` when `pipeline` is not a `Pipeline`
   *   or `options.model` has no `generate` function.
   */
  constructor(pipeline: Pipeline, options: PipelineRuntimeOptions = {}) {
    if (!Pipeline.isInstance(pipeline)) {
      throw argumentError(
        'pipeline',
        `Invalid pipeline ${describeValue(pipeline)}: expected what definePipeline(config) returns`,
      );
    }
    if (typeof options !== 'object' || (options as unknown) === null) {
      throw argumentError(
        'options',
        `Invalid runtime options ${describeValue(options)}: expected an object { model? }`,
      );
    }
    const model = options.model;
    if (
      model !== undefined &&
      (typeof model !== 'object' || (model as unknown) === null || typeof model.generate !== 'function')
    ) {
      throw argumentError(
        'options.model',
        `Invalid model ${describeValue(model)}: expected a ChatModel { generate(request) }`,
      );
    }
    this.pipeline = pipeline;
    this.#compiled = compiledPipeline(pipeline);
    if (model !== undefined) (this as { model?: ChatModel }).model = model;
  }

  /**
   * Runs the pipeline on `input` from its first stage until it completes, pauses on an interrupt
   * or is terminated, and resolves with the final envelope.
   *
   * With `mode: 'parallel'` the pipeline runs as a DAG: every stage whose `requires` have
   * succeeded (all of them, or one for `joinStrategy: 'any'`) and whose `after` stages have run or
   * will not run starts, concurrently with the others; outputs and counters are merged into the
   * one envelope, so bounds hold across concurrent stages; a failed stage's dependents are
   * skipped (`skippedStages`) while the others go on, and the run ends `stage_failed`.
   *
   * @throws PipelineUsageError (as a rejection) `PIPELINE_ARGUMENT_INVALID` for malformed options.
   * @example
   * ```ts
   * const env = await runtime.run('draft a release note', { abortSignal: AbortSignal.timeout(60_000) });
   * if (env.terminalReason === 'completed') console.log(env.outputs.publish);
   * ```
   */
  async run(input: unknown, opts?: RunOptions): Promise<Envelope> {
    return this.#execute(this.#prepareRun(input, opts), undefined, undefined);
  }

  /**
   * Like {@link PipelineRuntime.run}, as a stream of {@link PipelineEvent}s: `stage_start` /
   * `stage_end` per stage, `interrupt` when the run pauses, and always a final `end` carrying the
   * envelope. The run starts when iteration starts; bad options reject the first `next()`.
   * Stopping iteration early cancels the run.
   *
   * @example
   * ```ts
   * for await (const event of runtime.stream(input)) {
   *   if (event.type === 'stage_end') console.log(`${event.stage} -> ${event.next}`);
   *   if (event.type === 'end') return event.envelope;
   * }
   * ```
   */
  stream(input: unknown, opts?: RunOptions): AsyncIterable<PipelineEvent> {
    return eventStream<PipelineEvent>((emit, abortSignal) =>
      this.#execute(this.#prepareRun(input, opts), emit, abortSignal),
    );
  }

  /**
   * Continues a run paused on an interrupt with the answer `response`, and resolves with a **new**
   * envelope (the argument is not changed). The run keeps its outputs, counters, edge traversals,
   * errors and trace; the interrupt moves to `resolvedInterrupts` with its response.
   *
   * Where it continues: a clarification at the pipeline's `clarificationResumeStage` (default:
   * the stage that raised it); an approved confirmation (`approved: true`) at
   * `confirmationResumeStage` (default: the raising stage), while any other answer ends the run
   * `user_denied`; other kinds at the raising stage. The first stage run sees `response` as
   * `ctx.response`. Continuing at a stage other than the raising one is a transition like any
   * other: its edge limit applies and, to an earlier stage, it counts as an iteration.
   *
   * A DAG-mode run continues its DAG: stages that completed, failed or were skipped stay so; the
   * raising stage runs again with `ctx.response` (configured resume stages are not used), and the
   * stages that were waiting start as their dependencies allow.
   *
   * @throws PipelineStateError (as a rejection) `NO_PENDING_INTERRUPT` when the envelope is not
   *   paused on an interrupt; `INTERRUPT_EXPIRED` when its interrupt has expired.
   * @throws PipelineUsageError (as a rejection) `PIPELINE_ENVELOPE_INVALID` when `envelope` is not an
   *   `Envelope` or its interrupt names a stage this pipeline does not have;
   *   `PIPELINE_ARGUMENT_INVALID` for a malformed response or options.
   * @example
   * ```ts
   * const paused = await runtime.run(request);
   * if (paused.interrupt?.kind === 'confirmation') {
   *   const done = await runtime.resume(paused, { approved: await confirm(paused.interrupt.payload) });
   * }
   * ```
   */
  async resume(envelope: Envelope, response: InterruptResponse, opts?: ResumeOptions): Promise<Envelope> {
    return this.#execute(this.#prepareResume(envelope, response, opts), undefined, undefined);
  }

  /**
   * Like {@link PipelineRuntime.resume}, as a stream of {@link PipelineEvent}s ending with `end`.
   * Errors that `resume` rejects with reject the first `next()`.
   *
   * @example
   * ```ts
   * for await (const event of runtime.resumeStream(paused, { text: 'the 9:15' })) log(event);
   * ```
   */
  resumeStream(envelope: Envelope, response: InterruptResponse, opts?: ResumeOptions): AsyncIterable<PipelineEvent> {
    return eventStream<PipelineEvent>((emit, abortSignal) =>
      this.#execute(this.#prepareResume(envelope, response, opts), emit, abortSignal),
    );
  }

  #prepareRun(input: unknown, opts: RunOptions | undefined): PreparedRun {
    const o = checkOptions(opts, RUN_KEYS);
    const mode: unknown = o.mode ?? 'sequential';
    if (mode !== 'sequential' && mode !== 'parallel') {
      throw argumentError('opts.mode', `Invalid run mode ${describeValue(mode)}: expected "sequential" or "parallel"`);
    }
    if (o.envelopeId !== undefined && (typeof o.envelopeId !== 'string' || o.envelopeId === '')) {
      throw argumentError(
        'opts.envelopeId',
        `Invalid envelopeId ${describeValue(o.envelopeId)}: expected a non-empty string`,
      );
    }
    const first = this.#compiled.stages[0] as CompiledStage;
    const state = newRunState(o.envelopeId ?? crypto.randomUUID(), input, mode, first.name);
    return { state, start: mode === 'parallel' ? NEW_DAG_RUN : { stage: first }, opts: o, control: runControlOf(opts) };
  }

  #prepareResume(envelope: Envelope, response: InterruptResponse, opts: ResumeOptions | undefined): PreparedRun {
    if (!Envelope.isInstance(envelope)) {
      throw new PipelineUsageError({
        code: 'PIPELINE_ENVELOPE_INVALID',
        argument: 'envelope',
        message: `Cannot resume ${describeValue(envelope)}: expected an Envelope (Envelope.fromJSON rebuilds one from its JSON)`,
      });
    }
    const answer = parseResponse(response, 'response', 'PIPELINE_ARGUMENT_INVALID');
    const o = checkOptions(opts, RESUME_KEYS);
    const interrupt = envelope.interrupt;
    if (interrupt === undefined) {
      const why = envelope.terminated
        ? `it is terminated (${envelope.terminalReason ?? 'unknown'})`
        : 'it is not paused on an interrupt';
      throw new PipelineStateError({
        code: 'NO_PENDING_INTERRUPT',
        envelopeId: envelope.id,
        message: `Cannot resume envelope ${JSON.stringify(envelope.id)}: ${why}`,
      });
    }
    const compiled = this.#compiled;
    const raising = compiled.byName.get(interrupt.stage);
    if (raising === undefined) {
      throw new PipelineUsageError({
        code: 'PIPELINE_ENVELOPE_INVALID',
        argument: 'envelope.interrupt.stage',
        message: `Cannot resume envelope ${JSON.stringify(envelope.id)}: its interrupt was raised by stage ${JSON.stringify(interrupt.stage)}, which pipeline ${JSON.stringify(compiled.name)} does not have`,
      });
    }
    if (envelope.mode === 'parallel') checkDagEnvelope(compiled, envelope);
    if (interrupt.expiresAt !== undefined && Date.now() >= Date.parse(interrupt.expiresAt)) {
      throw new PipelineStateError({
        code: 'INTERRUPT_EXPIRED',
        envelopeId: envelope.id,
        interruptId: interrupt.id,
        expiresAt: interrupt.expiresAt,
        message: `Cannot resume envelope ${JSON.stringify(envelope.id)}: its ${interrupt.kind} interrupt expired at ${interrupt.expiresAt}`,
      });
    }

    const state = runStateFrom(envelope);
    const resolved: ResolvedInterrupt = { ...interrupt, response: { ...answer }, resolvedAt: isoNow() };
    state.interrupt = undefined;
    state.resolvedInterrupts.push(resolved);
    const control = runControlOf(opts);
    if (interrupt.kind === 'confirmation' && answer.approved !== true) {
      terminate(state, 'user_denied', `confirmation denied at stage ${JSON.stringify(raising.name)}`, raising.name);
      return { state, start: undefined, opts: o, control };
    }
    const configured =
      interrupt.kind === 'clarification'
        ? compiled.clarificationResumeStage
        : interrupt.kind === 'confirmation'
          ? compiled.confirmationResumeStage
          : undefined;
    if (envelope.mode === 'parallel') {
      const dag: DagStart = {
        mode: 'parallel',
        resumed: { stage: raising, response: answer },
        ignoredResumeStage: configured === raising ? undefined : configured?.name,
      };
      return { state, start: dag, opts: o, control };
    }
    const stage = configured ?? raising;
    const start: StartPoint =
      stage === raising
        ? { stage, response: answer }
        : { stage, response: answer, via: compiled.targetBetween(raising, stage.name) };
    return { state, start, opts: o, control };
  }

  async #execute(
    prepared: PreparedRun,
    emit: ((event: PipelineEvent) => void) | undefined,
    streamSignal: AbortSignal | undefined,
  ): Promise<Envelope> {
    const { state, start, opts, control } = prepared;
    control?.onState?.(state);
    const onEvent = control?.onEvent;
    const sink =
      onEvent === undefined
        ? emit
        : emit === undefined
          ? onEvent
          : (event: PipelineEvent): void => {
              onEvent(event);
              emit(event);
            };
    if (start !== undefined) {
      const bounds = this.#compiled.bounds;
      const controller = new AbortController();
      const scope: RunScope = {
        pipeline: this.#compiled,
        state,
        model: this.model,
        maxIterations: Math.min(bounds.maxIterations, opts.bounds?.maxIterations ?? Infinity),
        maxLlmCalls: Math.min(bounds.maxLlmCalls, opts.bounds?.maxLlmCalls ?? Infinity),
        maxAgentHops: Math.min(bounds.maxAgentHops, opts.bounds?.maxAgentHops ?? Infinity),
        maxToolCalls: control?.maxToolCalls ?? Infinity,
        toolCalls: control?.toolCalls ?? { used: 0 },
        signal: controller.signal,
        emit: sink,
        timedOut: false,
        llmRefused: false,
        toolRefused: false,
      };
      const unlinks: (() => void)[] = [];
      const link = (signal: AbortSignal | undefined): void => {
        if (signal === undefined || controller.signal.aborted) return;
        if (signal.aborted) {
          controller.abort(signal.reason);
          return;
        }
        const onAbort = (): void => {
          controller.abort(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        unlinks.push(() => {
          signal.removeEventListener('abort', onAbort);
        });
      };
      link(opts.abortSignal);
      link(streamSignal);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeoutMs = opts.timeoutMs;
      if (timeoutMs !== undefined && !controller.signal.aborted) {
        timer = setTimeout(() => {
          if (controller.signal.aborted) return;
          scope.timedOut = true;
          controller.abort(new AbortedError({ message: `the run timed out after ${timeoutMs} ms` }));
        }, timeoutMs);
      }
      try {
        if (controller.signal.aborted) cancel(scope, 'stage' in start ? start.stage.name : state.currentStage);
        else if ('mode' in start) await runDag(scope, start);
        else await runSequential(scope, start);
      } finally {
        if (timer !== undefined) clearTimeout(timer);
        for (const unlink of unlinks) unlink();
      }
    }
    const envelope = envelopeFromState(state);
    if (sink !== undefined) sink({ type: 'end', envelope });
    return envelope;
  }
}

function argumentError(argument: string, message: string): PipelineUsageError {
  return new PipelineUsageError({ code: 'PIPELINE_ARGUMENT_INVALID', argument, message });
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function' &&
    typeof (value as AbortSignal).removeEventListener === 'function'
  );
}

function checkOptions(opts: RunOptions | undefined, allowed: readonly string[]): RunOptions {
  if (opts === undefined) return {};
  if (typeof opts !== 'object' || (opts as unknown) === null) {
    throw argumentError('opts', `Invalid options ${describeValue(opts)}: expected an object { ${allowed.join(', ')} }`);
  }
  for (const key of Object.keys(opts)) {
    if (!allowed.includes(key))
      throw argumentError(
        `opts.${key}`,
        `Unknown option ${JSON.stringify(key)}: expected one of ${allowed.join(', ')}`,
      );
  }
  if (opts.abortSignal !== undefined && !isAbortSignal(opts.abortSignal)) {
    throw argumentError(
      'opts.abortSignal',
      `Invalid abortSignal ${describeValue(opts.abortSignal)}: expected an AbortSignal`,
    );
  }
  const t = opts.timeoutMs;
  if (t !== undefined && (typeof t !== 'number' || !Number.isFinite(t) || t <= 0 || t > MAX_TIMEOUT_MS)) {
    throw argumentError(
      'opts.timeoutMs',
      `Invalid timeoutMs ${describeValue(t)}: expected a positive number of milliseconds up to ${MAX_TIMEOUT_MS}`,
    );
  }
  const b = opts.bounds;
  if (b !== undefined) {
    if (typeof b !== 'object' || (b as unknown) === null) {
      throw argumentError(
        'opts.bounds',
        `Invalid bounds ${describeValue(b)}: expected an object { maxIterations?, maxLlmCalls?, maxAgentHops? }`,
      );
    }
    for (const key of Object.keys(b)) {
      const v = (b as Record<string, unknown>)[key];
      if (key !== 'maxIterations' && key !== 'maxLlmCalls' && key !== 'maxAgentHops') {
        throw argumentError(
          `opts.bounds.${key}`,
          `Unknown bound ${JSON.stringify(key)}: expected maxIterations, maxLlmCalls or maxAgentHops`,
        );
      }
      if (v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)) {
        throw argumentError(`opts.bounds.${key}`, `Invalid ${key} ${describeValue(v)}: expected a positive integer`);
      }
    }
  }
  return opts;
}

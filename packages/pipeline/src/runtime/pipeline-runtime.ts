import { pushStream } from '@signalyard/core/internal';
import { describeValue, systemClock, type ChatModel, type Clock } from '@signalyard/core';
import type { CompiledPipeline } from '../definition/compiled-pipeline.js';
import { compiledPipeline, Pipeline } from '../definition/pipeline.js';
import type { Envelope } from '../envelope/envelope.js';
import type { InterruptResponse } from '../envelope/interrupt.js';
import { PipelineUsageError } from '../errors/pipeline-usage-error.js';
import { executeRun } from './execute-run.js';
import type { PipelineEvent } from './pipeline-event.js';
import { prepareResume, prepareRun, type PreparedRun } from './prepare-run.js';
import {
  DEFAULT_MAX_TRACE_ENTRIES,
  parseRuntimeOptions,
  type PipelineRuntimeOptions,
  type ResumeOptions,
  type RunOptions,
} from './runtime-options.js';

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
  /** At most this many entries in an envelope's `trace` (the most recent ones). */
  readonly maxTraceEntries: number;
  readonly #compiled: CompiledPipeline;
  readonly #clock: Clock;

  /**
   * @param pipeline What `definePipeline` returned.
   * @param options `model`: the model stages reach as `ctx.model`.
   * @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` when `pipeline` is not a `Pipeline`
   *   or `options.model` has no `generate` function (or a `stream` that is not a function).
   */
  constructor(pipeline: Pipeline, options: PipelineRuntimeOptions = {}) {
    if (!Pipeline.isInstance(pipeline)) {
      throw new PipelineUsageError({
        code: 'PIPELINE_ARGUMENT_INVALID',
        argument: 'pipeline',
        message: `Invalid pipeline ${describeValue(pipeline)}: expected what definePipeline(config) returns`,
      });
    }
    const { model, maxTraceEntries, clock } = parseRuntimeOptions(options);
    this.pipeline = pipeline;
    this.maxTraceEntries = maxTraceEntries ?? DEFAULT_MAX_TRACE_ENTRIES;
    this.#clock = clock ?? systemClock;
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
    return this.#execute(
      prepareRun(this.#compiled, input, opts, this.maxTraceEntries, this.#clock),
      undefined,
      undefined,
    );
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
    return pushStream<PipelineEvent>((emit, abortSignal) =>
      this.#execute(prepareRun(this.#compiled, input, opts, this.maxTraceEntries, this.#clock), emit, abortSignal),
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
    return this.#execute(
      prepareResume(this.#compiled, envelope, response, opts, this.maxTraceEntries, this.#clock),
      undefined,
      undefined,
    );
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
    return pushStream<PipelineEvent>((emit, abortSignal) =>
      this.#execute(
        prepareResume(this.#compiled, envelope, response, opts, this.maxTraceEntries, this.#clock),
        emit,
        abortSignal,
      ),
    );
  }

  #execute(
    prepared: PreparedRun,
    emit: ((event: PipelineEvent) => void) | undefined,
    streamSignal: AbortSignal | undefined,
  ): Promise<Envelope> {
    return executeRun(prepared, { pipeline: this.#compiled, model: this.model, emit, streamSignal });
  }
}

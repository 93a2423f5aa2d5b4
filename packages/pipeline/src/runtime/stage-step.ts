import { describeValue } from '@signalyard/core';
import type { CompiledStage } from '../definition/compiled-pipeline.js';
import type { StageErrorRecord, TraceEntry } from '../envelope/envelope-json.js';
import type { InterruptResponse } from '../envelope/interrupt.js';
import { messageOf } from '../shared/error-message.js';
import { isoAt } from '@signalyard/core/internal';
import { runClockNow, type RunScope } from './run-scope.js';
import { recordTrace, storedOutput, storeOutput } from './run-state.js';
import { RunStageContext, type RaisedInterrupt } from './run-stage-context.js';
import { isThenable, settle } from './settle-stage.js';
import { startStageDeadline, type StageDeadline } from './stage-deadline.js';
import { failureOf, outputFailure, type Failure } from './stage-failure.js';
import { EMPTY_OUTPUT, normalizeOutput } from './stage-output.js';

// How the stage's call ended: it returned (or resolved), it threw (or rejected), or its signal
// fired first. Numbers, not objects: a synchronous stage costs no allocation here.
const RETURNED = 0;
const THREW = 1;
const ABORTED = 2;

/**
 * One execution of one stage: the step both the sequential and the DAG loop take. `start`
 * starts the stage: the hop is counted, `currentStage` set, `stage_start` emitted, the stage's
 * deadline started, and `run(ctx)` called. When the stage returns a promise, `pending` holds it
 * until {@link StageStep.wait} settles it; otherwise the outcome is known at once.
 *
 * The outcome, before any routing: `cancelled` (the run was cancelled while the stage ran, and
 * the stage did not finish first), `raised` (it raised an interrupt), or an `output` and maybe a
 * `failure` (it threw, timed out, returned an invalid output, or an output with a truthy
 * `error`). The output is stored in the run's outputs as soon as it is known. Nothing a stage
 * does makes this throw. {@link StageStep.record} then records the step.
 * @internal
 */
export class StageStep {
  /** The stage of the current execution. */
  stage: CompiledStage = undefined as unknown as CompiledStage;
  /** When it started (ISO 8601). */
  startedAt = '';
  /** The stage's promise while it runs; `undefined` once the outcome is known. */
  pending: PromiseLike<unknown> | undefined = undefined;
  /** The run was cancelled while the stage ran, and the stage did not finish first. */
  cancelled = false;
  /** The interrupt the stage raised (then its output is not stored). */
  raised: RaisedInterrupt | undefined = undefined;
  /** The stage's output (`{}` when it failed without one). */
  output: Record<string, unknown> = EMPTY_OUTPUT;
  /** Why the stage failed; a loop may add one (a routing failure) before recording. */
  failure: Failure | undefined = undefined;
  /** When the stage ended (ISO 8601), once the outcome is known. */
  endedAt = '';
  /** The same, in ms since the epoch (the run's clock). */
  endMs = 0;
  readonly #scope: RunScope;
  #ctx: RunStageContext | undefined = undefined;
  /** The last trace entry recorded for each stage (by index): an equal entry is shared, not made again. */
  readonly #recent: (TraceEntry | undefined)[] = [];
  #deadline: StageDeadline | undefined = undefined;
  #signal: AbortSignal;

  /** A step of `scope`'s run; {@link StageStep.start} starts an execution (a sequential run reuses one step). */
  constructor(scope: RunScope) {
    this.#scope = scope;
    this.#signal = scope.signal;
  }

  /**
   * Starts an execution of `stage` (see the class); `response` is what it sees as `ctx.response`.
   * `nowMs` is a reading of the run's clock the caller has just made (the previous step's end,
   * when the loop goes straight on), so a step reads the clock once.
   */
  start(stage: CompiledStage, response: InterruptResponse | undefined, nowMs: number): void {
    const scope = this.#scope;
    this.stage = stage;
    this.pending = undefined;
    this.cancelled = false;
    this.raised = undefined;
    this.output = EMPTY_OUTPUT;
    this.failure = undefined;
    const st = scope.state;
    st.agentHops++;
    st.currentStage = stage.name;
    if (scope.emit !== undefined) scope.emit({ type: 'stage_start', stage: stage.name });
    this.startedAt = isoAt(nowMs);
    const deadline =
      stage.timeoutMs === undefined ? undefined : startStageDeadline(stage.name, stage.timeoutMs, scope.signal);
    this.#deadline = deadline;
    this.#signal = deadline?.controller.signal ?? scope.signal;
    const ctx = new RunStageContext(scope, stage.name, this.#signal, response);
    this.#ctx = ctx;
    let value: unknown;
    try {
      value = stage.config.run(ctx);
    } catch (error) {
      this.#end(THREW, error);
      return;
    }
    if (isThenable(value)) this.pending = value;
    else this.#end(RETURNED, value);
  }

  /** Waits until the stage's promise settles or its signal fires (only while `pending`). */
  async wait(): Promise<void> {
    const settled = await settle(this.pending as PromiseLike<unknown>, this.#signal);
    this.pending = undefined;
    if (settled.ok === true) this.#end(RETURNED, settled.value);
    else if (settled.ok === false) this.#end(THREW, settled.error);
    else this.#end(ABORTED, undefined);
  }

  #end(how: number, value: unknown): void {
    this.#deadline?.clear();
    (this.#ctx as RunStageContext).end();
    const ms = runClockNow(this.#scope);
    this.endMs = ms;
    this.endedAt = isoAt(ms);
    if (how === ABORTED && this.#scope.signal.aborted) {
      this.cancelled = true;
      return;
    }
    const raised = (this.#ctx as RunStageContext).raised;
    if (raised !== undefined) {
      this.raised = raised;
      return;
    }
    const stageController = this.#deadline?.controller;
    if (stageController?.signal.aborted === true) this.failure = failureOf(stageController.signal.reason);
    else if (how === RETURNED) this.#takeOutput(value);
    else if (how === THREW) this.failure = failureOf(value);
  }

  /** Normalises the stage's return value into its output, stores it, and notes a truthy `error` field. */
  #takeOutput(value: unknown): void {
    let normalized: Record<string, unknown> | undefined;
    let problem = 'expected a plain object or undefined';
    try {
      normalized = normalizeOutput(value, storedOutput(this.#scope.state, this.stage.outputKey));
    } catch (error) {
      problem = `reading it threw: ${messageOf(error)}`;
    }
    if (normalized === undefined) {
      this.failure = {
        message: `Stage ${JSON.stringify(this.stage.name)} returned ${describeValue(value)}: ${problem}`,
        code: 'PIPELINE_STAGE_OUTPUT_INVALID',
      };
      return;
    }
    this.output = normalized;
    storeOutput(this.#scope.state, this.stage.outputKey, normalized);
    if (normalized.error) this.failure = outputFailure(normalized.error);
  }

  /**
   * Records the step: a failure in `envelope.errors` (a cancelled stage as `ABORTED`), or the
   * stage as completed (unless it raised an interrupt); its trace entry with `next`; and the
   * `stage_end` event.
   */
  record(next: string): void {
    const scope = this.#scope;
    const st = scope.state;
    const name = this.stage.name;
    const emit = scope.emit;
    if (this.cancelled) {
      const error = `aborted: ${messageOf(scope.signal.reason)}`;
      st.errors.push({ stage: name, error, code: 'ABORTED', at: this.endedAt });
      recordTrace(st, this.#traceEntry('end'));
      if (emit !== undefined) emit({ type: 'stage_end', stage: name, output: EMPTY_OUTPUT, failed: true, next: 'end' });
      return;
    }
    const failure = this.failure;
    if (failure !== undefined) {
      const entry: StageErrorRecord = { stage: name, error: failure.message, at: this.endedAt };
      if (failure.code !== undefined) entry.code = failure.code;
      st.errors.push(entry);
    } else if (this.raised === undefined && !st.completed.has(name)) {
      st.completed.add(name);
      st.completedStages.push(name);
    }
    recordTrace(st, this.#traceEntry(next));
    if (emit !== undefined)
      emit({ type: 'stage_end', stage: name, output: this.output, failed: failure !== undefined, next });
  }

  /**
   * The step's trace entry, frozen. Stages in a tight loop mostly start and end within the same
   * millisecond, so the entry of a stage's previous execution is often equal: it is shared.
   */
  #traceEntry(next: string): TraceEntry {
    const stage = this.stage;
    const recent = this.#recent[stage.index];
    if (recent?.next === next && recent.endedAt === this.endedAt && recent.startedAt === this.startedAt) return recent;
    const entry: TraceEntry = Object.freeze({
      stage: stage.name,
      startedAt: this.startedAt,
      endedAt: this.endedAt,
      next,
    });
    this.#recent[stage.index] = entry;
    return entry;
  }
}

import type { Envelope, StageErrorRecord } from './envelope.js';
import type { Interrupt, InterruptResponse } from './interrupt.js';
import { isoNow } from './iso-now.js';
import type { CompiledPipeline, CompiledStage } from './pipeline.js';
import { PipelineUsageError } from './pipeline-usage-error.js';
import { dagPlanOf } from './dag-plan.js';
import {
  cancel,
  failureOf,
  isThenable,
  messageOf,
  normalizeOutput,
  outputFailure,
  safeDescribe,
  settle,
  startStageDeadline,
  type Failure,
  type Settled,
} from './run-engine.js';
import type { RunScope } from './run-scope.js';
import { RunStageContext } from './run-stage-context.js';
import { terminate } from './run-state.js';

/**
 * Where a DAG-mode run (re)starts. A new run starts every stage whose dependencies allow it; a
 * resumed one continues from the envelope's `completedStages`, `skippedStages` and failures,
 * and the stage that raised the answered interrupt runs again, seeing the answer.
 * @internal
 */
export interface DagStart {
  readonly mode: 'parallel';
  /** The stage that raised the interrupt `resume` answered, and the answer it sees as `ctx.response`. */
  readonly resumed?: { readonly stage: CompiledStage; readonly response: InterruptResponse } | undefined;
  /** A configured resume stage (`clarificationResumeStage` / `confirmationResumeStage`) this resume does not use. */
  readonly ignoredResumeStage?: string | undefined;
}

/** The start of a new DAG-mode run. @internal */
export const NEW_DAG_RUN: DagStart = Object.freeze({ mode: 'parallel' });

// A stage's status during a run.
const PENDING = 0; // not started yet
const RUNNING = 1;
const SUCCEEDED = 2;
const FAILED = 3;
const SKIPPED = 4; // a requirement failed or was skipped: it will not run
const HELD = 5; // raised an interrupt: it runs again when the run is resumed

const EMPTY_OUTPUT: Record<string, unknown> = Object.freeze({});

/**
 * Checks that a DAG-mode envelope's progress names stages of `pipeline`, before `resume`.
 *
 * @throws PipelineUsageError `PIPELINE_ENVELOPE_INVALID` for a completed or skipped stage, or a
 *   stage of an error record, that the pipeline does not have.
 * @internal
 */
export function checkDagEnvelope(pipeline: CompiledPipeline, envelope: Envelope): void {
  const check = (name: string, path: string): void => {
    if (!pipeline.byName.has(name)) {
      throw new PipelineUsageError({
        code: 'PIPELINE_ENVELOPE_INVALID',
        argument: path,
        message: `Cannot resume envelope ${JSON.stringify(envelope.id)}: its ${path} names stage ${JSON.stringify(name)}, which pipeline ${JSON.stringify(pipeline.name)} does not have`,
      });
    }
  };
  envelope.completedStages.forEach((name, i) => {
    check(name, `envelope.completedStages[${i}]`);
  });
  envelope.skippedStages.forEach((name, i) => {
    check(name, `envelope.skippedStages[${i}]`);
  });
  envelope.errors.forEach((e, i) => {
    check(e.stage, `envelope.errors[${i}].stage`);
  });
}

/**
 * Runs the pipeline as a DAG until every stage has run or been skipped, an interrupt pauses it,
 * a bound ends it, or it is cancelled, updating `scope.state` as it goes. Never throws for
 * anything a stage does; never waits on a stage that will not run.
 *
 * Each stage runs at most once (a stage that raised an interrupt runs again after `resume`). A
 * pending stage starts when its `requires` have succeeded (all of them; one for `joinStrategy:
 * 'any'`) and each of its `after` stages has succeeded, failed or been skipped; ready stages
 * start in stage order and run concurrently. A stage is skipped when a requirement failed or was
 * skipped (with `any`: when all of them did). Stages that wait on each other only through
 * `after` (an ordering cycle) would wait forever: the first of them in stage order starts
 * anyway, with a warning.
 *
 * A failure, interrupt or refused bound starts nothing new and lets the running stages finish.
 * The run then ends, in this order: cancelled; `maxAgentHops` refused a stage; a model call, then
 * a tool call, was refused; paused on the first interrupt raised; `stage_failed` when any stage
 * failed; else `completed`. `currentStage` is the last stage started (`'end'` once completed).
 * @internal
 */
export async function runDag(scope: RunScope, start: DagStart): Promise<void> {
  const st = scope.state;
  const signal = scope.signal;
  const emit = scope.emit;
  const plan = dagPlanOf(scope.pipeline);
  const stages = plan.stages;
  const requires = plan.requires;
  const after = plan.after;
  const joinAny = plan.joinAny;
  const n = stages.length;
  const byName = scope.pipeline.byName;

  // ---- where the run stands: everything not completed, skipped or failed is still to run
  const status = new Uint8Array(n);
  const ready = new Uint32Array(n); // the ready set being started
  for (const name of st.completedStages) status[(byName.get(name) as CompiledStage).index] = SUCCEEDED;
  for (const name of st.skippedStages) status[(byName.get(name) as CompiledStage).index] = SKIPPED;
  for (const e of st.errors) {
    const i = (byName.get(e.stage) as CompiledStage).index;
    if (status[i] === PENDING) status[i] = FAILED;
  }
  const resumedIndex = start.resumed === undefined ? -1 : start.resumed.stage.index;
  if (resumedIndex !== -1) status[resumedIndex] = PENDING; // the raising stage runs again, whatever the envelope says of it
  let response = start.resumed?.response;

  // Fields of one object, not `let`s: they change in callbacks, which control-flow narrowing cannot see.
  const run: {
    running: number;
    hopsRefused: boolean;
    raised: Interrupt | undefined;
    wake: (() => void) | undefined;
  } = { running: 0, hopsRefused: false, raised: undefined, wake: undefined };

  if (emit !== undefined) {
    if (plan.routingWarning !== undefined) emit({ type: 'warning', message: plan.routingWarning });
    if (start.ignoredResumeStage !== undefined && start.resumed !== undefined) {
      emit({
        type: 'warning',
        message: `DAG mode resumes at the stage that raised the interrupt (${JSON.stringify(start.resumed.stage.name)}), not at the configured resume stage ${JSON.stringify(start.ignoredResumeStage)}`,
      });
    }
  }

  const stopping = (): boolean =>
    signal.aborted || run.hopsRefused || run.raised !== undefined || scope.llmRefused || scope.toolRefused;

  /** The stage's requirements have succeeded (all, or one for `any`). */
  const requirementsMet = (i: number): boolean => {
    const reqs = requires[i] as readonly number[];
    if (reqs.length === 0) return true;
    if (joinAny[i] === true) {
      for (let k = 0; k < reqs.length; k++) if (status[reqs[k] as number] === SUCCEEDED) return true;
      return false;
    }
    for (let k = 0; k < reqs.length; k++) if (status[reqs[k] as number] !== SUCCEEDED) return false;
    return true;
  };

  /** The stage's requirements can no longer be met: one failed or was skipped (with `any`: all did). */
  const requirementsDead = (i: number): boolean => {
    const reqs = requires[i] as readonly number[];
    if (reqs.length === 0) return false;
    const any = joinAny[i] === true;
    for (let k = 0; k < reqs.length; k++) {
      const s = status[reqs[k] as number];
      const dead = s === FAILED || s === SKIPPED;
      if (dead !== any) return dead; // `all`: one dead is enough; `any`: one alive is enough
    }
    return any;
  };

  /** Every `after` stage has run (succeeded or failed) or will not run. */
  const afterSettled = (i: number): boolean => {
    const deps = after[i] as readonly number[];
    for (let k = 0; k < deps.length; k++) {
      const s = status[deps[k] as number];
      if (s !== SUCCEEDED && s !== FAILED && s !== SKIPPED) return false;
    }
    return true;
  };

  /** Marks every stage whose requirements can no longer be met as skipped, transitively. */
  const propagateSkips = (): void => {
    let changed = true;
    while (changed) {
      changed = false;
      for (let i = 0; i < n; i++) {
        if (status[i] === PENDING && requirementsDead(i)) {
          status[i] = SKIPPED;
          st.skippedStages.push((stages[i] as CompiledStage).name);
          changed = true;
        }
      }
    }
  };

  const notify = (): void => {
    const w = run.wake;
    run.wake = undefined;
    if (w !== undefined) w();
  };

  /** Records how stage `i` ended. */
  const finish = (
    i: number,
    ctx: RunStageContext,
    stageController: AbortController | undefined,
    startedAt: string,
    outcome: Settled,
  ): void => {
    const stage = stages[i] as CompiledStage;
    const endedAt = isoNow();

    // ---- cancelled while it ran, and the stage did not finish first
    if (outcome.ok === 'aborted' && signal.aborted) {
      status[i] = FAILED;
      st.errors.push({
        stage: stage.name,
        error: `aborted: ${messageOf(signal.reason)}`,
        code: 'ABORTED',
        at: endedAt,
      });
      st.trace.push({ stage: stage.name, startedAt, endedAt, next: 'end' });
      if (emit !== undefined)
        emit({ type: 'stage_end', stage: stage.name, output: EMPTY_OUTPUT, failed: true, next: 'end' });
      return;
    }

    let output = EMPTY_OUTPUT;
    let failure: Failure | undefined;
    const raised = ctx.raised;
    if (raised === undefined) {
      if (stageController?.signal.aborted === true) {
        failure = failureOf(stageController.signal.reason);
      } else if (outcome.ok === true) {
        let normalized: Record<string, unknown> | undefined;
        let problem = 'expected a plain object or undefined';
        try {
          normalized = normalizeOutput(outcome.value);
        } catch (error) {
          problem = `reading it threw: ${messageOf(error)}`;
        }
        if (normalized === undefined) {
          failure = {
            message: `Stage ${JSON.stringify(stage.name)} returned ${safeDescribe(outcome.value)}: ${problem}`,
            code: 'PIPELINE_STAGE_OUTPUT_INVALID',
          };
        } else {
          output = normalized;
          st.outputs[stage.outputKey] = output;
          if (output.error) failure = outputFailure(output.error);
        }
      } else if (outcome.ok === false) {
        failure = failureOf(outcome.error);
      }
    }

    let next = 'end';
    let second: Interrupt | undefined; // the interrupt the run already pauses on, when this stage raised another
    if (raised !== undefined) {
      status[i] = HELD;
      next = raised.kind;
      if (run.raised === undefined) {
        const interrupt: Interrupt =
          raised.payload === undefined
            ? { id: crypto.randomUUID(), kind: raised.kind, stage: stage.name, createdAt: endedAt }
            : {
                id: crypto.randomUUID(),
                kind: raised.kind,
                stage: stage.name,
                payload: raised.payload,
                createdAt: endedAt,
              };
        const ttl = scope.pipeline.interruptTtlMs[raised.kind];
        if (ttl !== undefined) interrupt.expiresAt = new Date(Date.parse(endedAt) + ttl).toISOString();
        run.raised = interrupt;
      } else {
        second = run.raised;
      }
    } else if (failure !== undefined) {
      status[i] = FAILED;
      const record: StageErrorRecord = { stage: stage.name, error: failure.message, at: endedAt };
      if (failure.code !== undefined) record.code = failure.code;
      st.errors.push(record);
    } else {
      status[i] = SUCCEEDED;
      if (!st.completed.has(stage.name)) {
        st.completed.add(stage.name);
        st.completedStages.push(stage.name);
      }
    }
    st.trace.push({ stage: stage.name, startedAt, endedAt, next });
    if (emit !== undefined) {
      emit({ type: 'stage_end', stage: stage.name, output, failed: failure !== undefined, next });
      if (second !== undefined) {
        emit({
          type: 'warning',
          message: `Stage ${JSON.stringify(stage.name)} raised a ${next} interrupt while the run was already pausing on the ${second.kind} interrupt of stage ${JSON.stringify(second.stage)}: it runs again after resume`,
        });
      }
    }
  };

  /**
   * Starts stage `i` (its hop already checked). Returns true when it finished synchronously;
   * otherwise it is running and `finish` is called when it settles.
   */
  const launch = (i: number): boolean => {
    const stage = stages[i] as CompiledStage;
    st.agentHops++;
    st.currentStage = stage.name;
    status[i] = RUNNING;
    if (emit !== undefined) emit({ type: 'stage_start', stage: stage.name });
    const startedAt = isoNow();

    const deadline =
      stage.timeoutMs === undefined ? undefined : startStageDeadline(stage.name, stage.timeoutMs, signal);
    const stageSignal = deadline?.controller.signal ?? signal;
    const stageController = deadline?.controller;
    const cleanup = (): void => {
      deadline?.clear();
    };
    let stageResponse: InterruptResponse | undefined;
    if (i === resumedIndex && response !== undefined) {
      stageResponse = response;
      response = undefined;
    }
    const ctx = new RunStageContext(scope, stage.name, stageSignal, stageResponse);
    let value: unknown;
    try {
      value = stage.config.run(ctx);
    } catch (error) {
      cleanup();
      finish(i, ctx, stageController, startedAt, { ok: false, error });
      return true;
    }
    if (!isThenable(value)) {
      cleanup();
      finish(i, ctx, stageController, startedAt, { ok: true, value });
      return true;
    }
    run.running++;
    void settle(value, stageSignal).then((outcome) => {
      cleanup();
      run.running--;
      finish(i, ctx, stageController, startedAt, outcome);
      notify();
    });
    return false;
  };

  /**
   * Starts the ready set: every stage ready now, in stage order. A stage of the set that
   * finishes synchronously does not hold back the others (they were ready together), except by
   * cancelling the run; the hop bound refuses the stages past it. Stages that finished
   * synchronously may make others ready: then it takes the next ready set.
   */
  const schedule = (): void => {
    while (!stopping()) {
      propagateSkips();
      let size = 0;
      for (let i = 0; i < n; i++) if (status[i] === PENDING && requirementsMet(i) && afterSettled(i)) ready[size++] = i;
      let finished = false;
      for (let k = 0; k < size; k++) {
        if (signal.aborted) return;
        if (st.agentHops + 1 > scope.maxAgentHops) {
          run.hopsRefused = true;
          return;
        }
        if (launch(ready[k] as number)) finished = true;
      }
      if (!finished) return;
    }
  };

  /**
   * With nothing running and nothing ready, pending stages can only be waiting on each other
   * through `after`: starts the first of them (in stage order) whose requirements are met.
   * Returns false when nothing is pending.
   */
  const breakOrderingCycle = (): boolean => {
    let first = -1;
    const waiting: string[] = [];
    for (let i = 0; i < n; i++) {
      if (status[i] !== PENDING) continue;
      waiting.push(JSON.stringify((stages[i] as CompiledStage).name));
      if (first === -1 && requirementsMet(i)) first = i;
    }
    if (first === -1) return false;
    if (st.agentHops + 1 > scope.maxAgentHops) {
      run.hopsRefused = true;
      return false;
    }
    if (emit !== undefined) {
      emit({
        type: 'warning',
        message: `Stages ${waiting.join(', ')} wait on each other through "after" (an ordering cycle): starting ${JSON.stringify((stages[first] as CompiledStage).name)} without waiting`,
      });
    }
    launch(first);
    return true;
  };

  for (;;) {
    if (!stopping()) schedule();
    if (run.running === 0) {
      if (!stopping() && breakOrderingCycle()) continue;
      break;
    }
    await new Promise<void>((resolve) => {
      run.wake = resolve;
    });
  }

  // ---- how the run ends, in precedence order (skips are recorded whatever the ending)
  propagateSkips();
  if (signal.aborted) {
    cancel(scope, st.currentStage);
    return;
  }
  if (run.hopsRefused) {
    terminate(st, 'max_agent_hops_exceeded', `max agent hops exceeded: ${scope.maxAgentHops}`, st.currentStage);
    return;
  }
  if (scope.llmRefused) {
    terminate(st, 'max_llm_calls_exceeded', `max llm calls exceeded: ${scope.maxLlmCalls}`, st.currentStage);
    return;
  }
  if (scope.toolRefused) {
    terminate(st, 'max_tool_calls_exceeded', `max tool calls exceeded: ${scope.maxToolCalls}`, st.currentStage);
    return;
  }
  if (run.raised !== undefined) {
    st.interrupt = run.raised;
    if (emit !== undefined) emit({ type: 'interrupt', interrupt: run.raised });
    return;
  }
  const failed: string[] = [];
  for (const e of st.errors) {
    const i = (byName.get(e.stage) as CompiledStage).index;
    if (status[i] === FAILED && !failed.includes(e.stage)) failed.push(e.stage);
  }
  if (failed.length > 0) {
    const first = st.errors.find((e) => e.stage === failed[0]) as StageErrorRecord;
    const message =
      failed.length === 1
        ? `stage ${JSON.stringify(first.stage)} failed: ${first.error}`
        : `${failed.length} stages failed: ${failed.map((name) => JSON.stringify(name)).join(', ')} (first: ${first.error})`;
    terminate(st, 'stage_failed', message, st.currentStage);
    return;
  }
  // As in sequential mode, a run that completes ends at 'end'; while it runs (and when it
  // pauses or stops early) currentStage is the last stage started.
  terminate(st, 'completed', undefined, 'end');
}

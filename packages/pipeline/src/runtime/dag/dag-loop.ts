import type { CompiledStage } from '../../definition/compiled-pipeline.js';
import type { StageErrorRecord } from '../../envelope/envelope-json.js';
import type { Interrupt, InterruptResponse } from '../../envelope/interrupt.js';
import { endIfStopped, hopsRefusal, hopWouldExceed, newInterrupt, pause } from '../run-ending.js';
import { runClockNow, type RunScope } from '../run-scope.js';
import { terminate } from '../run-state.js';
import { StageStep } from '../stage-step.js';
import { TimeSlice, sliceTime } from '../time-slice.js';
import { dagPlanOf, type DagPlan } from './dag-plan.js';
import {
  FAILED,
  HELD,
  isReady,
  PENDING,
  requirementsDead,
  requirementsMet,
  RUNNING,
  SKIPPED,
  SUCCEEDED,
} from './dag-readiness.js';
import type { DagStart } from './dag-start.js';

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
export function runDag(scope: RunScope, start: DagStart): Promise<void> {
  return new DagLoop(scope, start).run();
}

/** One DAG-mode run: the stages' statuses, what is running, and the loop that starts stages as they become ready. */
class DagLoop {
  readonly #scope: RunScope;
  readonly #plan: DagPlan;
  /** Each stage's status (see dag-readiness.ts), by stage index. */
  readonly #status: Uint8Array;
  /** The ready set being started. */
  readonly #ready: Uint32Array;
  /** The stage that raised the interrupt being answered (-1 for a new run), and the answer it sees once. */
  readonly #resumedIndex: number;
  #response: InterruptResponse | undefined;
  #running = 0;
  #hopsRefused = false;
  /** The first interrupt raised: the run pauses on it. */
  #raised: Interrupt | undefined = undefined;
  #wake: (() => void) | undefined = undefined;
  /** When the last stage ended (or the run started), on the time slice's time ({@link sliceTime}). */
  #lastEndMs = Date.now();
  readonly #slice = new TimeSlice(this.#lastEndMs);

  constructor(scope: RunScope, start: DagStart) {
    this.#scope = scope;
    this.#plan = dagPlanOf(scope.pipeline);
    const n = this.#plan.stages.length;
    this.#status = new Uint8Array(n);
    this.#ready = new Uint32Array(n);
    this.#resumedIndex = start.resumed === undefined ? -1 : start.resumed.stage.index;
    this.#response = start.resumed?.response;
    this.#restore();
    const emit = scope.emit;
    if (emit === undefined) return;
    if (this.#plan.routingWarning !== undefined) emit({ type: 'warning', message: this.#plan.routingWarning });
    if (start.ignoredResumeStage !== undefined && start.resumed !== undefined) {
      emit({
        type: 'warning',
        message: `DAG mode resumes at the stage that raised the interrupt (${JSON.stringify(start.resumed.stage.name)}), not at the configured resume stage ${JSON.stringify(start.ignoredResumeStage)}`,
      });
    }
  }

  /** Where the run stands: everything not completed, skipped or failed is still to run. */
  #restore(): void {
    const st = this.#scope.state;
    const byName = this.#scope.pipeline.byName;
    const status = this.#status;
    for (const name of st.completedStages) status[(byName.get(name) as CompiledStage).index] = SUCCEEDED;
    for (const name of st.skippedStages) status[(byName.get(name) as CompiledStage).index] = SKIPPED;
    for (const e of st.errors) {
      const i = (byName.get(e.stage) as CompiledStage).index;
      if (status[i] === PENDING) status[i] = FAILED;
    }
    // the raising stage runs again, whatever the envelope says of it
    if (this.#resumedIndex !== -1) status[this.#resumedIndex] = PENDING;
  }

  async run(): Promise<void> {
    let yieldNow = false;
    for (;;) {
      if (yieldNow) await this.#slice.yield();
      yieldNow = !this.#stopping() && this.#schedule();
      if (yieldNow) continue;
      if (this.#running === 0) {
        if (!this.#stopping() && this.#breakOrderingCycle()) continue;
        break;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#slice.restart(this.#lastEndMs); // the stage that woke the loop has just ended
    }
    this.#end();
  }

  #stopping(): boolean {
    const scope = this.#scope;
    return (
      scope.signal.aborted || this.#hopsRefused || this.#raised !== undefined || scope.llmRefused || scope.toolRefused
    );
  }

  /** Marks every stage whose requirements can no longer be met as skipped, transitively. */
  #propagateSkips(): void {
    const status = this.#status;
    const stages = this.#plan.stages;
    let changed = true;
    while (changed) {
      changed = false;
      for (let i = 0; i < status.length; i++) {
        if (status[i] === PENDING && requirementsDead(this.#plan, status, i)) {
          status[i] = SKIPPED;
          this.#scope.state.skippedStages.push((stages[i] as CompiledStage).name);
          changed = true;
        }
      }
    }
  }

  /**
   * Starts the ready set: every stage ready now, in stage order. A stage of the set that
   * finishes synchronously does not hold back the others (they were ready together), except by
   * cancelling the run; the hop bound refuses the stages past it. Stages that finished
   * synchronously may make others ready: then it takes the next ready set, unless the time
   * slice is used up: then it returns true, and the loop yields to the event loop first.
   */
  #schedule(): boolean {
    const status = this.#status;
    const ready = this.#ready;
    while (!this.#stopping()) {
      if (this.#slice.due(this.#lastEndMs)) return true;
      this.#propagateSkips();
      let size = 0;
      for (let i = 0; i < status.length; i++) if (isReady(this.#plan, status, i)) ready[size++] = i;
      let finished = false;
      for (let k = 0; k < size; k++) {
        if (this.#scope.signal.aborted) return false;
        if (hopWouldExceed(this.#scope)) {
          this.#hopsRefused = true;
          return false;
        }
        if (this.#launch(ready[k] as number)) finished = true;
      }
      if (!finished) return false;
    }
    return false;
  }

  /** Starts stage `i` (its hop already checked). Returns true when it finished synchronously. */
  #launch(i: number): boolean {
    this.#status[i] = RUNNING;
    let response: InterruptResponse | undefined;
    if (i === this.#resumedIndex && this.#response !== undefined) {
      response = this.#response;
      this.#response = undefined;
    }
    const step = new StageStep(this.#scope);
    step.start(this.#plan.stages[i] as CompiledStage, response, runClockNow(this.#scope));
    if (step.pending === undefined) {
      this.#finish(i, step);
      return true;
    }
    this.#running++;
    void step.wait().then(() => {
      this.#running--;
      this.#finish(i, step);
      const wake = this.#wake;
      this.#wake = undefined;
      if (wake !== undefined) wake();
    });
    return false;
  }

  /** Records how stage `i` ended. */
  #finish(i: number, step: StageStep): void {
    this.#lastEndMs = sliceTime(this.#scope, step.endMs);
    if (step.cancelled) {
      this.#status[i] = FAILED;
      step.record('end');
      return;
    }
    const raised = step.raised;
    let second: Interrupt | undefined; // the interrupt the run already pauses on, when this stage raised another
    if (raised !== undefined) {
      this.#status[i] = HELD;
      if (this.#raised === undefined)
        this.#raised = newInterrupt(this.#scope, raised.kind, step.stage.name, raised.payload, step.endedAt);
      else second = this.#raised;
    } else {
      this.#status[i] = step.failure === undefined ? SUCCEEDED : FAILED;
    }
    const next = raised === undefined ? 'end' : raised.kind;
    step.record(next);
    const emit = this.#scope.emit;
    if (second !== undefined && emit !== undefined) {
      emit({
        type: 'warning',
        message: `Stage ${JSON.stringify(step.stage.name)} raised a ${next} interrupt while the run was already pausing on the ${second.kind} interrupt of stage ${JSON.stringify(second.stage)}: it runs again after resume`,
      });
    }
  }

  /**
   * With nothing running and nothing ready, pending stages can only be waiting on each other
   * through `after`: starts the first of them (in stage order) whose requirements are met.
   * Returns false when nothing is pending.
   */
  #breakOrderingCycle(): boolean {
    const status = this.#status;
    const stages = this.#plan.stages;
    let first = -1;
    const waiting: string[] = [];
    for (let i = 0; i < status.length; i++) {
      if (status[i] !== PENDING) continue;
      waiting.push(JSON.stringify((stages[i] as CompiledStage).name));
      if (first === -1 && requirementsMet(this.#plan, status, i)) first = i;
    }
    if (first === -1) return false;
    if (hopWouldExceed(this.#scope)) {
      this.#hopsRefused = true;
      return false;
    }
    this.#scope.emit?.({
      type: 'warning',
      message: `Stages ${waiting.join(', ')} wait on each other through "after" (an ordering cycle): starting ${JSON.stringify((stages[first] as CompiledStage).name)} without waiting`,
    });
    this.#launch(first);
    return true;
  }

  /** How the run ends, in precedence order (skips are recorded whatever the ending). */
  #end(): void {
    this.#propagateSkips();
    const scope = this.#scope;
    const st = scope.state;
    const at = st.currentStage;
    if (endIfStopped(scope, at, at, this.#hopsRefused ? hopsRefusal(scope, at) : undefined)) return;
    if (this.#raised !== undefined) {
      pause(scope, this.#raised);
      return;
    }
    const failed: string[] = [];
    for (const e of st.errors) {
      const i = (scope.pipeline.byName.get(e.stage) as CompiledStage).index;
      if (this.#status[i] === FAILED && !failed.includes(e.stage)) failed.push(e.stage);
    }
    if (failed.length > 0) {
      const first = st.errors.find((e) => e.stage === failed[0]) as StageErrorRecord;
      const message =
        failed.length === 1
          ? `stage ${JSON.stringify(first.stage)} failed: ${first.error}`
          : `${failed.length} stages failed: ${failed.map((name) => JSON.stringify(name)).join(', ')} (first: ${first.error})`;
      terminate(st, 'stage_failed', message, at);
      return;
    }
    // As in sequential mode, a run that completes ends at 'end'; while it runs (and when it
    // pauses or stops early) currentStage is the last stage started.
    terminate(st, 'completed', undefined, 'end');
  }
}

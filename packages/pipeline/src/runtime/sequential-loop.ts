import type { CompiledStage, CompiledTarget } from '../definition/compiled-pipeline.js';
import type { InterruptKind, InterruptResponse } from '../envelope/interrupt.js';
import { cancel, endIfStopped, newInterrupt, pause, refuse, refuseHop } from './run-ending.js';
import { runClockNow, type RunScope } from './run-scope.js';
import { terminate } from './run-state.js';
import { routeAfter, traverse } from './routing.js';
import type { Failure } from './stage-failure.js';
import { StageStep } from './stage-step.js';
import { TimeSlice, sliceTime } from './time-slice.js';

/** Where a sequential run (re)starts. @internal */
export interface StartPoint {
  readonly stage: CompiledStage;
  /** The answer the first stage sees as `ctx.response` (after `resume`). */
  readonly response?: InterruptResponse | undefined;
  /** A transition into `stage` still to be checked against the bounds and counted (a configured resume stage). */
  readonly via?: CompiledTarget | undefined;
}

/**
 * Runs stages one after another from `start` until the run completes, fails, pauses on an
 * interrupt, is refused by a bound, or is cancelled, updating `scope.state` as it goes. Never
 * throws for anything a stage does: every outcome is recorded in the state.
 *
 * Per step ({@link StageStep}): the stage runs and its outcome is recorded; a failure routes to
 * `errorNext`, otherwise the rules, then `defaultNext`, decide. Then, in this order:
 * cancellation; a refused transition (edge limit, `maxIterations` for loop-backs, `maxAgentHops`);
 * a refused model or tool call; an interrupt pauses the run; a failure without `errorNext` ends
 * it; `end` completes it. After every few milliseconds of work the loop yields to the event
 * loop ({@link TimeSlice}).
 * @internal
 */
export async function runSequential(scope: RunScope, start: StartPoint): Promise<void> {
  let stage: CompiledStage | undefined = start.stage;
  let response = start.response;
  // The entry into the first stage: a transition (checked and counted) or just a hop.
  const entry = start.via === undefined ? refuseHop(scope, stage.name) : refuse(scope, start.via);
  if (endIfStopped(scope, stage.name, stage.name, entry)) return;
  if (start.via !== undefined) traverse(scope, start.via);

  // The caller has checked cancellation before the first step; each step checks it at its end,
  // and so does each yield to the event loop (see TimeSlice: timers and abort listeners run even
  // when every stage is synchronous).
  const step = new StageStep(scope);
  let now = runClockNow(scope);
  const slice = new TimeSlice(sliceTime(scope, now));
  while (stage !== undefined) {
    step.start(stage, response, now);
    response = undefined;
    const awaited = step.pending !== undefined;
    if (awaited) await step.wait();
    stage = afterStep(scope, step);
    // The next stage starts now: the loop has only routed since this step ended.
    now = step.endMs;
    if (stage !== undefined && slice.afterStep(sliceTime(scope, now), awaited)) {
      await slice.yield();
      if (scope.signal.aborted) {
        cancel(scope, stage.name);
        return;
      }
      now = runClockNow(scope);
    }
  }
}

/** Records `step`, routes, and either ends the run (returns `undefined`) or counts the transition to the next stage. */
function afterStep(scope: RunScope, step: StageStep): CompiledStage | undefined {
  const stage = step.stage;
  const raised = step.raised;
  if (step.cancelled) {
    step.record('end');
    cancel(scope, stage.name);
    return undefined;
  }
  const next = raised === undefined ? routeAfter(step) : undefined;
  step.record(raised !== undefined ? raised.kind : next === undefined ? 'end' : next.name);

  const toStage = next?.stage !== undefined;
  const refusal = toStage ? refuse(scope, next) : undefined;
  if (endIfStopped(scope, stage.name, toStage ? next.name : stage.name, refusal)) return undefined;
  if (raised !== undefined) {
    pause(scope, newInterrupt(scope, raised.kind, stage.name, raised.payload, step.endedAt));
    return undefined;
  }
  if (next === undefined) {
    const failure = step.failure as Failure;
    terminate(
      scope.state,
      'stage_failed',
      `stage ${JSON.stringify(stage.name)} failed: ${failure.message}`,
      stage.name,
    );
    return undefined;
  }
  if (next.stage === undefined) {
    if (next.kind === 'end') terminate(scope.state, 'completed', undefined, 'end');
    else pause(scope, newInterrupt(scope, next.name as InterruptKind, stage.name, step.output, step.endedAt));
    return undefined;
  }
  traverse(scope, next);
  return next.stage;
}

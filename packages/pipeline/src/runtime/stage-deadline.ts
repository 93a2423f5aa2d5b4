import { linkAbort, startTimer } from '@signalyard/core/internal';
import { PipelineStageError } from '../errors/pipeline-stage-error.js';

/** A stage's own deadline: a controller linked to the run's signal, aborted after `timeoutMs`. @internal */
export interface StageDeadline {
  /** Aborted when the run is, or with `PIPELINE_STAGE_TIMEOUT` once the stage's time is up. */
  readonly controller: AbortController;
  /** Stops the timer and unlinks from the run's signal. */
  clear(): void;
}

/** Starts a stage's `timeoutMs` deadline (setTimeout + AbortController, so fake timers work). @internal */
export function startStageDeadline(stage: string, timeoutMs: number, runSignal: AbortSignal): StageDeadline {
  const controller = new AbortController();
  const unlink = linkAbort(controller, runSignal);
  const stopTimer = startTimer(timeoutMs, () => {
    controller.abort(
      new PipelineStageError({
        code: 'PIPELINE_STAGE_TIMEOUT',
        stage,
        message: `Stage ${JSON.stringify(stage)} timed out after ${timeoutMs} ms`,
      }),
    );
  });
  return {
    controller,
    clear() {
      stopTimer();
      unlink();
    },
  };
}

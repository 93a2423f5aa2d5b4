import type { CompiledPipeline, CompiledStage } from '../../definition/compiled-pipeline.js';
import type { Envelope } from '../../envelope/envelope.js';
import type { InterruptResponse } from '../../envelope/interrupt.js';
import { PipelineUsageError } from '../../errors/pipeline-usage-error.js';

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

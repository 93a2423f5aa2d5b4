import type { CompiledPipeline, CompiledStage } from '../../definition/compiled-pipeline.js';

/**
 * A pipeline's dependency graph as DAG mode reads it, by stage index: each stage's `requires`
 * and `after` stages, whether it joins its requirements with `any`, and the warning a DAG run
 * gives when stages carry routing settings it does not use. Built once per pipeline, on the
 * first DAG run.
 * @internal
 */
export interface DagPlan {
  readonly stages: readonly CompiledStage[];
  /** Per stage, the indexes of its `requires` (duplicates removed). */
  readonly requires: readonly (readonly number[])[];
  /** Per stage, the indexes of its `after` stages (duplicates removed). */
  readonly after: readonly (readonly number[])[];
  /** Per stage, true for `joinStrategy: 'any'`. */
  readonly joinAny: readonly boolean[];
  /** Names the stages whose `routingRules` / `defaultNext` / `errorNext` DAG mode ignores; undefined when none has them. */
  readonly routingWarning: string | undefined;
}

const plans = new WeakMap<CompiledPipeline, DagPlan>();

/** The DAG plan of `pipeline`, built on first use. @internal */
export function dagPlanOf(pipeline: CompiledPipeline): DagPlan {
  let plan = plans.get(pipeline);
  if (plan === undefined) {
    plan = buildPlan(pipeline);
    plans.set(pipeline, plan);
  }
  return plan;
}

function buildPlan(pipeline: CompiledPipeline): DagPlan {
  const indexes = (names: readonly string[] | undefined): readonly number[] => {
    const out: number[] = [];
    // validated by definePipeline: every name is a stage
    for (const name of names ?? []) {
      const i = (pipeline.byName.get(name) as CompiledStage).index;
      if (!out.includes(i)) out.push(i);
    }
    return Object.freeze(out);
  };
  const routed: string[] = [];
  for (const s of pipeline.stages) {
    const c = s.config;
    const fields: string[] = [];
    if (c.routingRules !== undefined && c.routingRules.length > 0) fields.push('routingRules');
    if (c.defaultNext !== undefined) fields.push('defaultNext');
    if (c.errorNext !== undefined) fields.push('errorNext');
    if (fields.length > 0) routed.push(`${JSON.stringify(s.name)} (${fields.join(', ')})`);
  }
  return Object.freeze({
    stages: pipeline.stages,
    requires: Object.freeze(pipeline.stages.map((s) => indexes(s.config.requires))),
    after: Object.freeze(pipeline.stages.map((s) => indexes(s.config.after))),
    joinAny: Object.freeze(pipeline.stages.map((s) => s.config.joinStrategy === 'any')),
    routingWarning:
      routed.length === 0
        ? undefined
        : `DAG mode does not route: it ignores the routing settings of stage${routed.length === 1 ? '' : 's'} ${routed.join(', ')}; stages run by requires / after`,
  });
}

import type { CompiledStage, CompiledTarget } from '../definition/compiled-pipeline.js';
import { ruleValuesEqual } from '../definition/rule-equality.js';
import { messageOf } from '../shared/error-message.js';
import type { RunScope } from './run-scope.js';
import type { StageStep } from './stage-step.js';

/**
 * Where a sequential run goes after `step` (which did not raise an interrupt): a failed stage to
 * its `errorNext` (`undefined` when it has none); otherwise the first matching rule, else
 * `defaultNext`. A rule comparison that throws fails the stage (`PIPELINE_ROUTING_FAILED`).
 * @internal
 */
export function routeAfter(step: StageStep): CompiledTarget | undefined {
  const stage = step.stage;
  if (step.failure === undefined) {
    try {
      return route(stage, step.output);
    } catch (error) {
      step.failure = {
        message: `Routing after stage ${JSON.stringify(stage.name)} failed: ${messageOf(error)}`,
        code: 'PIPELINE_ROUTING_FAILED',
      };
    }
  }
  return stage.errorTarget;
}

/** The first matching rule's target, else the default. Throws only if a getter in the output throws. */
function route(stage: CompiledStage, output: Record<string, unknown>): CompiledTarget {
  const rules = stage.rules;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as (typeof rules)[number];
    if (Object.hasOwn(output, rule.condition) && ruleValuesEqual(output[rule.condition], rule.value))
      return rule.target;
  }
  return stage.defaultTarget;
}

/** Counts the transition to `t`: its edge, and an iteration when it is a loop-back. @internal */
export function traverse(scope: RunScope, t: CompiledTarget): void {
  const st = scope.state;
  st.edgeTraversals[t.edgeKey] = (st.edgeTraversals[t.edgeKey] ?? 0) + 1;
  if (t.loopBack) st.iteration++;
}

import { INTERRUPT_KINDS, type InterruptKind } from '../envelope/interrupt.js';
import {
  SPECIAL_TARGETS,
  type CompiledPipeline,
  type CompiledStage,
  type CompiledTarget,
} from './compiled-pipeline.js';
import { DEFAULT_BOUNDS, type EdgeLimit, type PipelineBounds, type PipelineConfig } from './pipeline-config.js';
import type { RoutingRule, StageConfig } from './stage-config.js';

/** A validated configuration compiled: frozen copies of its stages and edge limits, and the runtime form. @internal */
export interface Compiled {
  readonly compiled: CompiledPipeline;
  readonly stages: readonly StageConfig[];
  readonly edgeLimits: readonly EdgeLimit[];
}

/** Compiles a configuration `validatePipelineConfig` accepted. @internal */
export function compilePipeline(config: PipelineConfig): Compiled {
  const stages: readonly StageConfig[] = Object.freeze(config.stages.map(freezeStage));
  const edgeLimits: readonly EdgeLimit[] = Object.freeze(
    (config.edgeLimits ?? []).map((e) => Object.freeze({ from: e.from, to: e.to, maxCount: e.maxCount })),
  );
  const limits = new Map<string, number>();
  for (const e of edgeLimits) limits.set(`${e.from}->${e.to}`, e.maxCount);

  const compiledStages: CompiledStage[] = stages.map((s, index) => ({
    name: s.name,
    index,
    outputKey: s.outputKey ?? s.name,
    timeoutMs: s.timeoutMs,
    rules: [],
    defaultTarget: undefined as unknown as CompiledTarget,
    errorTarget: undefined,
    config: s,
  }));
  const byName = new Map(compiledStages.map((s) => [s.name, s]));
  const targetBetween = (from: CompiledStage, to: string): CompiledTarget => {
    const special = SPECIAL_TARGETS.get(to);
    if (special !== undefined) return special;
    const stage = byName.get(to) as CompiledStage;
    const edgeKey = `${from.name}->${to}`;
    return Object.freeze({
      kind: 'stage',
      name: to,
      stage,
      edgeKey,
      edgeLimit: limits.get(edgeKey) ?? Infinity,
      loopBack: stage.index < from.index,
    });
  };
  for (const s of compiledStages) {
    s.rules = Object.freeze(
      (s.config.routingRules ?? []).map((r: RoutingRule) =>
        Object.freeze({ condition: r.condition, value: r.value, target: targetBetween(s, r.target) }),
      ),
    );
    s.defaultTarget = targetBetween(s, s.config.defaultNext ?? 'end');
    s.errorTarget = s.config.errorNext === undefined ? undefined : targetBetween(s, s.config.errorNext);
  }
  const compiled: CompiledPipeline = {
    name: config.name,
    stages: compiledStages,
    byName,
    bounds: boundsOf(config),
    edgeLimits: limits,
    clarificationResumeStage:
      config.clarificationResumeStage === undefined ? undefined : byName.get(config.clarificationResumeStage),
    confirmationResumeStage:
      config.confirmationResumeStage === undefined ? undefined : byName.get(config.confirmationResumeStage),
    interruptTtlMs: ttlOf(config),
    targetBetween,
  };
  return { compiled, stages, edgeLimits };
}

function boundsOf(config: PipelineConfig): PipelineBounds {
  return Object.freeze({
    maxIterations: config.maxIterations ?? DEFAULT_BOUNDS.maxIterations,
    maxLlmCalls: config.maxLlmCalls ?? DEFAULT_BOUNDS.maxLlmCalls,
    maxAgentHops: config.maxAgentHops ?? DEFAULT_BOUNDS.maxAgentHops,
  });
}

function ttlOf(config: PipelineConfig): Readonly<Partial<Record<InterruptKind, number>>> {
  const ttl: Partial<Record<InterruptKind, number>> = {};
  for (const kind of INTERRUPT_KINDS) {
    const ms = config.interruptTtlMs?.[kind];
    if (ms !== undefined) ttl[kind] = ms;
  }
  return Object.freeze(ttl);
}

const STAGE_FIELDS = ['name', 'run', 'outputKey', 'defaultNext', 'errorNext', 'joinStrategy', 'timeoutMs'] as const;

function freezeStage(s: StageConfig): StageConfig {
  const copy: Record<string, unknown> = {};
  // eslint-disable-next-line @typescript-eslint/unbound-method -- `run` is copied onto the frozen config and always called as its method
  for (const key of STAGE_FIELDS) if (s[key] !== undefined) copy[key] = s[key];
  if (s.routingRules !== undefined) {
    copy.routingRules = Object.freeze(
      s.routingRules.map((r) => Object.freeze({ condition: r.condition, value: r.value, target: r.target })),
    );
  }
  if (s.requires !== undefined) copy.requires = Object.freeze([...s.requires]);
  if (s.after !== undefined) copy.after = Object.freeze([...s.after]);
  return Object.freeze(copy) as unknown as StageConfig;
}

import { INTERRUPT_KINDS, type InterruptKind } from './interrupt.js';
import { DEFAULT_BOUNDS, type EdgeLimit, type PipelineBounds, type PipelineConfig } from './pipeline-config.js';
import { PipelineConfigError } from './pipeline-config-error.js';
import { pipelineToMermaid } from './pipeline-mermaid.js';
import type { RoutingRule, StageConfig } from './stage-config.js';
import { validatePipelineConfig } from './validate-pipeline-config.js';

/** Where a transition leads, precomputed for every routing target of every stage. @internal */
export interface CompiledTarget {
  readonly kind: 'stage' | 'end' | 'interrupt';
  /** The target's name: a stage name, `end`, `clarification` or `confirmation`. */
  readonly name: string;
  /** The target stage, for `kind: 'stage'`. */
  readonly stage: CompiledStage | undefined;
  /** `"from->to"`, for `kind: 'stage'`; `''` otherwise. */
  readonly edgeKey: string;
  /** The edge limit of `from->to`; `Infinity` when none. */
  readonly edgeLimit: number;
  /** The target is earlier in stage order than the source (a loop-back, counted as an iteration). */
  readonly loopBack: boolean;
}

/** @internal */
export interface CompiledRule {
  readonly condition: string;
  readonly value: unknown;
  readonly target: CompiledTarget;
}

/** @internal */
export interface CompiledStage {
  readonly name: string;
  readonly index: number;
  readonly outputKey: string;
  readonly timeoutMs: number | undefined;
  rules: readonly CompiledRule[];
  defaultTarget: CompiledTarget;
  errorTarget: CompiledTarget | undefined;
  readonly config: StageConfig;
}

/** @internal */
export interface CompiledPipeline {
  readonly name: string;
  readonly stages: readonly CompiledStage[];
  readonly byName: ReadonlyMap<string, CompiledStage>;
  readonly bounds: PipelineBounds;
  readonly edgeLimits: ReadonlyMap<string, number>;
  readonly clarificationResumeStage: CompiledStage | undefined;
  readonly confirmationResumeStage: CompiledStage | undefined;
  readonly interruptTtlMs: Readonly<Partial<Record<InterruptKind, number>>>;
  /** The transition `from → to` (a stage name or a special target). */
  targetBetween(from: CompiledStage, to: string): CompiledTarget;
}

let compiledOf: (pipeline: Pipeline) => CompiledPipeline;
let construct: (
  compiled: CompiledPipeline,
  stages: readonly StageConfig[],
  edgeLimits: readonly EdgeLimit[],
) => Pipeline;

/**
 * A validated, immutable pipeline: what {@link definePipeline} returns and `PipelineRuntime`
 * runs. Exposes its name, its stages (frozen copies of the configuration, in stage order), the
 * resolved bounds (defaults applied), edge limits and interrupt settings, and
 * {@link Pipeline.toMermaid}.
 *
 * @example
 * ```ts
 * const pipeline = definePipeline({ name: 'review', stages });
 * pipeline.maxIterations;   // 3 (the default)
 * console.log(pipeline.toMermaid());
 * ```
 */
export class Pipeline {
  /** The pipeline's name. */
  declare readonly name: string;
  /** The stages, in stage order (frozen copies of the configuration). */
  declare readonly stages: readonly StageConfig[];
  /** At most this many loop-backs per run (default 3). */
  declare readonly maxIterations: number;
  /** At most this many model calls per run (default 10). */
  declare readonly maxLlmCalls: number;
  /** At most this many stage executions per run (default 21). */
  declare readonly maxAgentHops: number;
  /** The three resolved bounds together. */
  declare readonly bounds: PipelineBounds;
  /** The edge limits, as configured. */
  declare readonly edgeLimits: readonly EdgeLimit[];
  /** Where a clarification resumes; absent = the raising stage. */
  declare readonly clarificationResumeStage?: string;
  /** Where an approved confirmation resumes; absent = the raising stage. */
  declare readonly confirmationResumeStage?: string;
  /** Interrupt expiry per kind, in ms. */
  declare readonly interruptTtlMs: Readonly<Partial<Record<InterruptKind, number>>>;
  readonly #compiled: CompiledPipeline;

  private constructor(compiled: CompiledPipeline, stages: readonly StageConfig[], edgeLimits: readonly EdgeLimit[]) {
    this.#compiled = compiled;
    const self = this as unknown as Record<string, unknown>;
    self.name = compiled.name;
    self.stages = stages;
    self.maxIterations = compiled.bounds.maxIterations;
    self.maxLlmCalls = compiled.bounds.maxLlmCalls;
    self.maxAgentHops = compiled.bounds.maxAgentHops;
    self.bounds = compiled.bounds;
    self.edgeLimits = edgeLimits;
    if (compiled.clarificationResumeStage !== undefined)
      self.clarificationResumeStage = compiled.clarificationResumeStage.name;
    if (compiled.confirmationResumeStage !== undefined)
      self.confirmationResumeStage = compiled.confirmationResumeStage.name;
    self.interruptTtlMs = compiled.interruptTtlMs;
    Object.freeze(this);
  }

  static {
    compiledOf = (pipeline) => pipeline.#compiled;
    construct = (compiled, stages, edgeLimits) => new Pipeline(compiled, stages, edgeLimits);
  }

  /**
   * True when `value` is a `Pipeline` made by this copy of the package's `definePipeline`.
   *
   * @example
   * ```ts
   * if (!Pipeline.isInstance(p)) p = definePipeline(p);
   * ```
   */
  static isInstance(value: unknown): value is Pipeline {
    return typeof value === 'object' && value !== null && #compiled in value;
  }

  /**
   * A Mermaid `flowchart` of the pipeline: a start marker, every stage (in stage order), each
   * routing rule as a labelled edge (with its edge limit, when one is set), default edges, error
   * edges (dotted), `requires` edges (thick, dependency → dependent), `after` edges (dotted), and
   * the `end`, `clarification` and `confirmation` targets that are used.
   *
   * @example
   * ```ts
   * await writeFile('pipeline.mmd', pipeline.toMermaid());
   * ```
   */
  toMermaid(): string {
    return pipelineToMermaid(this.#compiled);
  }
}

/** @internal The compiled form of a pipeline, for the runtime. */
export function compiledPipeline(pipeline: Pipeline): CompiledPipeline {
  return compiledOf(pipeline);
}

/**
 * Validates a pipeline configuration and returns an immutable {@link Pipeline}.
 *
 * Everything is checked at once: an empty name; no stages; a stage without a name or `run`,
 * with a reserved name (`end`, `clarification`, `confirmation`) or a duplicate name; a rule
 * target, `defaultNext` or `errorNext` that is not a stage name or `end` / `clarification` /
 * `confirmation`; a rule without a `value`; `requires` / `after` naming unknown stages or the
 * stage itself; a dependency cycle in `requires`; edge limits naming unknown stages, repeated,
 * or with `maxCount < 1`; non-positive bounds, timeouts or interrupt TTLs; unknown keys.
 *
 * Defaults: `maxIterations` 3, `maxLlmCalls` 10, `maxAgentHops` 21; a stage's `outputKey` is its
 * name and its `defaultNext` is `end`, so stages flow only where routed.
 *
 * @throws PipelineConfigError `CONFIG_INVALID`, listing every problem with its path.
 * @example
 * ```ts
 * const pipeline = definePipeline({
 *   name: 'review',
 *   stages: [
 *     { name: 'draft', run: (ctx) => ({ text: write(ctx.input) }), defaultNext: 'review' },
 *     {
 *       name: 'review',
 *       run: (ctx) => ({ verdict: judge(ctx.outputs.draft) }),
 *       routingRules: [{ condition: 'verdict', value: 'revise', target: 'draft' }],
 *     },
 *   ],
 *   edgeLimits: [{ from: 'review', to: 'draft', maxCount: 2 }],
 * });
 * ```
 */
export function definePipeline(config: PipelineConfig): Pipeline {
  const problems = validatePipelineConfig(config);
  if (problems.length > 0) {
    const name =
      typeof config === 'object' &&
      (config as unknown) !== null &&
      typeof config.name === 'string' &&
      config.name !== ''
        ? config.name
        : undefined;
    throw new PipelineConfigError(name === undefined ? { problems } : { problems, pipeline: name });
  }
  return compile(config);
}

function compile(config: PipelineConfig): Pipeline {
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
  const specials = new Map<string, CompiledTarget>([
    ['end', { kind: 'end', name: 'end', stage: undefined, edgeKey: '', edgeLimit: Infinity, loopBack: false }],
    [
      'clarification',
      { kind: 'interrupt', name: 'clarification', stage: undefined, edgeKey: '', edgeLimit: Infinity, loopBack: false },
    ],
    [
      'confirmation',
      { kind: 'interrupt', name: 'confirmation', stage: undefined, edgeKey: '', edgeLimit: Infinity, loopBack: false },
    ],
  ]);
  const targetBetween = (from: CompiledStage, to: string): CompiledTarget => {
    const special = specials.get(to);
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
  const bounds: PipelineBounds = Object.freeze({
    maxIterations: config.maxIterations ?? DEFAULT_BOUNDS.maxIterations,
    maxLlmCalls: config.maxLlmCalls ?? DEFAULT_BOUNDS.maxLlmCalls,
    maxAgentHops: config.maxAgentHops ?? DEFAULT_BOUNDS.maxAgentHops,
  });
  const ttl: Partial<Record<InterruptKind, number>> = {};
  for (const kind of INTERRUPT_KINDS) {
    const ms = config.interruptTtlMs?.[kind];
    if (ms !== undefined) ttl[kind] = ms;
  }
  const compiled: CompiledPipeline = {
    name: config.name,
    stages: compiledStages,
    byName,
    bounds,
    edgeLimits: limits,
    clarificationResumeStage:
      config.clarificationResumeStage === undefined ? undefined : byName.get(config.clarificationResumeStage),
    confirmationResumeStage:
      config.confirmationResumeStage === undefined ? undefined : byName.get(config.confirmationResumeStage),
    interruptTtlMs: Object.freeze(ttl),
    targetBetween,
  };
  return construct(compiled, stages, edgeLimits);
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

import type { InterruptKind } from '../envelope/interrupt.js';
import { PipelineConfigError } from '../errors/pipeline-config-error.js';
import { compilePipeline } from './compile-pipeline.js';
import type { CompiledPipeline } from './compiled-pipeline.js';
import type { EdgeLimit, PipelineBounds, PipelineConfig } from './pipeline-config.js';
import { pipelineToMermaid } from './pipeline-mermaid.js';
import type { StageConfig } from './stage-config.js';
import { validatePipelineConfig } from './validate-pipeline-config.js';

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
    const name = nameOf(config);
    throw new PipelineConfigError(name === undefined ? { problems } : { problems, pipeline: name });
  }
  const { compiled, stages, edgeLimits } = compilePipeline(config);
  return construct(compiled, stages, edgeLimits);
}

/** The configuration's name, when it has a usable one (never throws). */
function nameOf(config: unknown): string | undefined {
  try {
    const name: unknown =
      typeof config === 'object' && config !== null ? (config as { name?: unknown }).name : undefined;
    return typeof name === 'string' && name !== '' ? name : undefined;
  } catch {
    return undefined;
  }
}

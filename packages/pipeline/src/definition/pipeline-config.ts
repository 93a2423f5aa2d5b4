import type { InterruptKind } from '../envelope/interrupt.js';
import type { StageConfig } from './stage-config.js';

/** An edge limit: the edge `from → to` may be traversed at most `maxCount` times per run. */
export interface EdgeLimit {
  /** The stage the edge leaves. */
  from: string;
  /** The stage it enters. */
  to: string;
  /** An integer ≥ 1. */
  maxCount: number;
}

/** The run bounds of a pipeline: each means "at most N" per run. */
export interface PipelineBounds {
  /** Loop-backs (transitions to a stage earlier in stage order). */
  maxIterations: number;
  /** Model calls: `ctx.model.generate()` calls and `ctx.model.stream()` streams. */
  maxLlmCalls: number;
  /** Stage executions. */
  maxAgentHops: number;
}

/**
 * The configuration `definePipeline` validates: a name, stages in order, bounds, edge limits and
 * how interrupts resume.
 *
 * @example
 * ```ts
 * const config: PipelineConfig = {
 *   name: 'review',
 *   stages: [draft, review, publish],
 *   maxIterations: 5,
 *   edgeLimits: [{ from: 'review', to: 'draft', maxCount: 3 }],
 *   interruptTtlMs: { clarification: 24 * 3600_000 },
 * };
 * ```
 */
export interface PipelineConfig {
  /** The pipeline's name, in envelopes, events and diagrams. */
  name: string;
  /** List order is stage order: the first stage runs first, and a transition to an earlier stage is a loop-back. */
  stages: readonly StageConfig[];
  /** At most this many loop-backs per run. Default 3. */
  maxIterations?: number;
  /** At most this many model calls per run. Default 10. */
  maxLlmCalls?: number;
  /** At most this many stage executions per run. Default 21. */
  maxAgentHops?: number;
  /** Per-edge traversal limits of a run. */
  edgeLimits?: readonly EdgeLimit[];
  /** Where a run resumes after a clarification. Default: the stage that raised it. */
  clarificationResumeStage?: string;
  /** Where a run resumes after an approved confirmation. Default: the stage that raised it. */
  confirmationResumeStage?: string;
  /** Expiry per interrupt kind, in ms after the interrupt was raised. Default: none expire. */
  interruptTtlMs?: Partial<Record<InterruptKind, number>>;
}

/** The bounds used when a configuration leaves them out. */
export const DEFAULT_BOUNDS: PipelineBounds = Object.freeze({ maxIterations: 3, maxLlmCalls: 10, maxAgentHops: 21 });

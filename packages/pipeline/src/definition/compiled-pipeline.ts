import type { InterruptKind } from '../envelope/interrupt.js';
import type { PipelineBounds } from './pipeline-config.js';
import type { StageConfig } from './stage-config.js';

// The form of a pipeline the runtime runs: every transition precomputed when the pipeline is
// defined, so a step is a lookup and a short rule scan.

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
interface CompiledRule {
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

const special = (kind: 'end' | 'interrupt', name: string): CompiledTarget =>
  Object.freeze({ kind, name, stage: undefined, edgeKey: '', edgeLimit: Infinity, loopBack: false });

/** The end of a run, and the two interrupt targets: the same from every stage. @internal */
export const SPECIAL_TARGETS: ReadonlyMap<string, CompiledTarget> = new Map([
  ['end', special('end', 'end')],
  ['clarification', special('interrupt', 'clarification')],
  ['confirmation', special('interrupt', 'confirmation')],
]);

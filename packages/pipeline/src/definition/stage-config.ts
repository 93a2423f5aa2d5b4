import type { StageContext } from './stage-context.js';

/**
 * A routing rule: after its stage, when the stage's output has the key `condition` **and** that
 * value equals `value`, the run goes to `target`. Rules are tried in order; the first match wins.
 *
 * Equality: primitives by `===` (so `0` equals `-0` and `NaN` equals nothing); arrays and plain
 * objects by recursive deep equality with the same rule (key order ignored, keys whose value is
 * `undefined` ignored); any other object only by identity. An absent key never matches, not even
 * `value: null`. Values of different types are simply unequal: comparing never throws.
 *
 * `target` is a stage name, `end`, `clarification` or `confirmation`.
 */
export interface RoutingRule {
  /** The output key to read. */
  condition: string;
  /** The value it must equal (JSON-deep equality; see the guide). */
  value: unknown;
  /** Where the run goes on a match: a stage, `end`, `clarification` or `confirmation`. */
  target: string;
}

/** DAG mode: how a stage's `requires` are joined. `all` (default) waits for every one; `any` for one. */
export type JoinStrategy = 'all' | 'any';

/**
 * What a stage's `run` returns: its output, stored in `envelope.outputs[outputKey]`. `undefined`
 * counts as `{}`; anything that is not a plain object fails the stage.
 */
export type StageOutput = Record<string, unknown> | undefined;

/**
 * One stage of a pipeline: a function and where the run goes after it.
 *
 * After the stage, routing is: a **failure** (it threw, timed out, or returned an output whose
 * `error` field is truthy) goes to `errorNext`, or ends the run `stage_failed`; otherwise the
 * first matching `routingRules` entry, else `defaultNext` (default `end`: stages flow only where
 * routed). `requires`, `after` and `joinStrategy` are for DAG mode.
 *
 * @example
 * ```ts
 * const review: StageConfig = {
 *   name: 'review',
 *   run: (ctx) => ({ verdict: looksGood(ctx.outputs.draft) ? 'approve' : 'revise' }),
 *   routingRules: [{ condition: 'verdict', value: 'revise', target: 'draft' }],
 *   defaultNext: 'publish',
 * };
 * ```
 */
export interface StageConfig {
  /** Unique within the pipeline; not `end`, `clarification` or `confirmation`. */
  name: string;
  /** The stage's work. Its return value is its output (see {@link StageOutput}). */
  run(ctx: StageContext): Promise<StageOutput> | StageOutput;
  /** Where the output is stored in `envelope.outputs`. Default: `name`. */
  outputKey?: string;
  /** Tried in order after the stage; the first match decides where the run goes. */
  routingRules?: readonly RoutingRule[];
  /** Where the run goes when no rule matches. Default: `end`. */
  defaultNext?: string;
  /** Where the run goes when the stage fails. Default: none (the run ends `stage_failed`). */
  errorNext?: string;
  /** DAG mode: hard dependencies. The stage starts once they have succeeded, and is skipped when one fails or is skipped. */
  requires?: readonly string[];
  /** DAG mode: soft ordering. The stage waits for these stages if they run (success or failure), not if they are skipped. */
  after?: readonly string[];
  /** DAG mode, over `requires`. Default `all`; `any`: one succeeded requirement is enough (skipped only when all fail). */
  joinStrategy?: JoinStrategy;
  /** Deadline for one execution of the stage, in ms: its `ctx.abortSignal` fires and it fails. */
  timeoutMs?: number;
}

import type { Action } from './action.js';
import type { Signal, SignalKind } from './signal.js';

/** What a route predicate knows besides the signal: the session and agent it is routed for. */
export interface RouteContext {
  /** The session the signal is for (absent outside a Runner). */
  readonly sessionKey?: string;
  /** That session's agent (absent outside a Runner). */
  readonly agentId?: string;
}

/**
 * One routing rule: for signals of `kind` (and, when given, for which `predicate` returns
 * exactly `true`), take `action`. Higher `priority` wins within a tier; ties go to the route
 * registered first.
 *
 * Predicates must not change state: `router.explain()` evaluates them again. A predicate that
 * needs per-session data reads it from the {@link RouteContext} and state its plugin keeps.
 */
export interface SignalRoute {
  /** The kind of signal the route is for. */
  readonly kind: SignalKind;
  /** Absent: matches every signal of `kind`. Only a result of exactly `true` counts as a match. */
  readonly predicate?: (signal: Signal, ctx: RouteContext) => boolean;
  /** The action applied when this route matches. */
  readonly action: Action;
  /** An integer; default 0; higher wins within a tier. */
  readonly priority?: number;
  /** Shown by `router.explain()` and in errors. */
  readonly name?: string;
}

/**
 * The three authority tiers of the composed router, searched in this order: a strategy route
 * beats an agent route beats a plugin route, whatever their priorities.
 */
export type Tier = 'strategy' | 'agent' | 'plugin';

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

/** Why a route did or did not win a routing decision (the router's `explain()`). */
export type RouteOutcome = 'matched' | 'predicate_false' | 'outranked' | 'shadowed_by_higher_tier';

/**
 * One route looked at for a routing decision, with why it did or did not win: the router's
 * `explain()` list, and the `considered` list of a runner's `route_decided` event.
 */
export interface ConsideredRoute {
  /** The tier the route belongs to. */
  readonly tier: Tier;
  /** The route. */
  readonly route: SignalRoute;
  /** What became of it for this signal. */
  readonly outcome: RouteOutcome;
  /**
   * Present when the predicate of a route ranked below the winner threw while being explained
   * (`route()` never evaluates such predicates, so routing itself is unaffected).
   */
  readonly error?: unknown;
}

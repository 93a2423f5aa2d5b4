import type { ConsideredRoute, RouteContext, Signal } from '@signalyard/core';
import type { ComposedRouter, RouteMatch } from '@signalyard/router';

/** A routing decision with the router's `explain()` list. @internal */
export interface ExplainedDecision {
  /** The winning route, as `router.match()` would return it; `undefined` when unrouted. */
  readonly match: RouteMatch | undefined;
  /** Every route of the signal's kind looked at, with why it did or did not win. */
  readonly considered: readonly ConsideredRoute[];
}

/**
 * Routes `signal` once with `router.explain()`, which decides exactly as `router.match()` does
 * and records every route it looked at on the way: the decision and its explanation from one
 * routing pass. Used only while explaining is on; otherwise the runner calls `match()`, which
 * allocates nothing.
 * @throws what `router.match()` throws (a predicate that decides throwing).
 * @internal
 */
export function routeExplained(router: ComposedRouter, signal: Signal, ctx: RouteContext): ExplainedDecision {
  const decision = router.explain(signal, ctx);
  const { action, tier, route } = decision;
  return {
    match: action === undefined || tier === undefined || route === undefined ? undefined : { action, tier, route },
    considered: decision.considered,
  };
}

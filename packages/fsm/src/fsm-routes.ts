import type { RouteContext, Signal, SignalRoute } from '@signalyard/core';
import type { CompiledFsm } from './internal.js';

/**
 * The strategy-tier routes of one FSM instance: the builder's routes, each `inStates` route
 * wrapped so that it matches only while `currentState()` is one of its states (and its own
 * predicate, if any, returns `true`). A frozen array of frozen routes.
 */
export function instanceRoutes(routes: CompiledFsm['routes'], currentState: () => string): readonly SignalRoute[] {
  return Object.freeze(
    routes.map(({ route, inStates }): SignalRoute => {
      if (inStates === undefined) return route;
      const own = route.predicate;
      const predicate =
        own === undefined
          ? () => inStates.has(currentState())
          : (signal: Signal, ctx: RouteContext) => inStates.has(currentState()) && own(signal, ctx);
      return Object.freeze({ ...route, predicate });
    }),
  );
}

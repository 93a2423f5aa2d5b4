/**
 * `@signalyard/router`: the three-tier `ComposedRouter`, where strategy routes beat agent
 * routes beat plugin routes.
 *
 * @packageDocumentation
 */
export { ComposedRouter } from './composed-router.js';
export type {
  ComposeParts,
  ConsideredRoute,
  RouteDecision,
  RouteMatch,
  RouteOutcome,
  TierRoutes,
} from './composed-router.js';
export { RouteConfigError } from './route-config-error.js';
export type { RouteProblem } from './route-config-error.js';
export { RoutePredicateError } from './route-predicate-error.js';
export type { RouteContext, Tier } from '@signalyard/core';

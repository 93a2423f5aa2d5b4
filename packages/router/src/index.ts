/**
 * `@signalyard/router`: the three-tier `ComposedRouter`, where strategy routes beat agent
 * routes beat plugin routes.
 *
 * @packageDocumentation
 */
export { ComposedRouter } from './composed-router.js';
export type { ComposeParts, RouteDecision, RouteMatch, TierRoutes } from './composed-router.js';
export { RouteConfigError } from './errors/route-config-error.js';
export type { RouteConfigErrorCode, RouteProblem } from './errors/route-config-error.js';
export { RoutePredicateError } from './errors/route-predicate-error.js';
export type { RoutePredicateErrorCode } from './errors/route-predicate-error.js';
export { RouterArgumentError } from './errors/router-argument-error.js';
export type { RouterArgumentErrorCode } from './errors/router-argument-error.js';
export type { ConsideredRoute, RouteContext, RouteOutcome, Tier } from '@signalyard/core';

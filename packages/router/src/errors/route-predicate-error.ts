import { SignalyardError, hasErrorMarker, type SignalRoute, type Tier } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';

const marker = Symbol.for('signalyard.error.RoutePredicateError');

/** The code of {@link RoutePredicateError}. */
export type RoutePredicateErrorCode =
  /** The predicate of a route threw while `route()` (or `explain()`) evaluated it; the router never counts a throw as "no match", so the signal was not routed. `tier` and `routeName` name the route, the thrown error is the `cause`. Fix: make the predicate total (return `false` instead of throwing on input it does not expect); the `cause` says what it tripped on. */
  'ROUTE_PREDICATE_FAILED';

/**
 * A route predicate threw (code `ROUTE_PREDICATE_FAILED`). The router never treats a throw as
 * "no match": the strategy tier is a veto, and a crash must not let a gated signal fall through
 * to a more permissive lower tier. The original error is the `cause`.
 */
export class RoutePredicateError extends SignalyardError<RoutePredicateErrorCode> {
  private readonly [marker] = true;
  /** The tier of the route whose predicate threw. */
  readonly tier: Tier;
  /** The route whose predicate threw. */
  readonly route: SignalRoute;
  /** The route's `name`, or `kind#index` when it has none. */
  readonly routeName: string;

  constructor(options: { tier: Tier; route: SignalRoute; routeName: string; cause: unknown }) {
    const reason = errorText(options.cause);
    super({
      code: 'ROUTE_PREDICATE_FAILED',
      message: `The predicate of ${options.tier}-tier route "${options.routeName}" threw: ${reason}`,
      cause: options.cause,
    });
    this.tier = options.tier;
    this.route = options.route;
    this.routeName = options.routeName;
  }

  /** True when `error` is a `RoutePredicateError`, from any installed copy of the router. */
  static override isInstance(error: unknown): error is RoutePredicateError {
    return hasErrorMarker(error, marker);
  }
}

import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.RouterArgumentError');

/** The codes of {@link RouterArgumentError}. */
export type RouterArgumentErrorCode =
  /** `router.routes(tier)` was asked for a tier that is not `"strategy"`, `"agent"` or `"plugin"` (names compare exactly: `"Strategy"` and `"plugins"` are not tiers). Fix: pass one of the three tier names. */
  | 'ROUTE_TIER_INVALID'
  /** `router.route(signal)` or `router.explain(signal)` was given something that is not a `Signal` object (`null`, a string, a number, an object whose `kind` is not a string). Nothing was routed. Fix: build the signal with `signal(kind, payload)` from `@signalyard/core`. */
  | 'ROUTE_SIGNAL_INVALID';

/**
 * A `ComposedRouter` was called with an argument it cannot take: an unknown tier name, or
 * something that is not a signal. The message names the bad value and what was expected, and
 * {@link RouterArgumentError.value} holds it; nothing was routed. (Routes it cannot build, also
 * routes that are not an object, are a `RouteConfigError`.)
 *
 * @example
 * ```ts
 * try {
 *   router.routes('plugins' as Tier);
 * } catch (error) {
 *   if (RouterArgumentError.isInstance(error)) console.error(error.code); // ROUTE_TIER_INVALID
 * }
 * ```
 */
export class RouterArgumentError extends SignalyardError<RouterArgumentErrorCode> {
  private readonly [marker] = true;
  /** The argument that was rejected. */
  readonly value: unknown;

  constructor(options: { code: RouterArgumentErrorCode; message: string; value: unknown }) {
    super({ code: options.code, message: options.message });
    this.value = options.value;
  }

  /** True when `error` is a `RouterArgumentError`, from any installed copy of the router. */
  static override isInstance(error: unknown): error is RouterArgumentError {
    return hasErrorMarker(error, marker);
  }
}

import { SignalyardError, hasErrorMarker, type Tier } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.RouteConfigError');

/** The code of {@link RouteConfigError}. */
export type RouteConfigErrorCode =
  /** The routes given to a `ComposedRouter` (directly, or by a strategy or plugin through `ComposedRouter.compose`) are malformed: not an object `{ strategy?, agent?, plugin? }` at all (then `problems` is empty and the message says what was given), a tier that is not a list, a kind that is not a signal kind, a priority that is not a finite integer, a predicate that is not a function, a malformed action or name; or a plugin given to `ComposedRouter.compose` that is not an object with a string `name` and a `signalRoutes` function returning a list; `problems` lists each with its tier and index. Nothing was built. Fix: correct each listed route (build actions with `Action` and kinds with `SignalKind`), and pass the routes as an object `{ strategy?, agent?, plugin? }` of lists. */
  'ROUTE_INVALID';

/** One invalid route: its tier, its index in that tier's list, and what is wrong with it. */
export interface RouteProblem {
  /** The tier of the bad route. */
  readonly tier: Tier;
  /** Its index in that tier's list. */
  readonly index: number;
  /** What is wrong with it. */
  readonly message: string;
}

/**
 * Routes given to a `ComposedRouter` are malformed (code `ROUTE_INVALID`): an unknown kind
 * shape, a non-integer or non-finite priority, a predicate that is not a function, or a
 * malformed action. Lists every problem; `tier` and `index` name the first. Routes that are not
 * an object `{ strategy?, agent?, plugin? }` at all are this error too, with no problem listed
 * (`tier` and `index` are then `undefined`) and a message naming what was given.
 *
 * @example
 * ```ts
 * try {
 *   new ComposedRouter({ agent: routes });
 * } catch (error) {
 *   if (RouteConfigError.isInstance(error)) for (const p of error.problems) console.error(`${p.tier}[${p.index}]: ${p.message}`);
 * }
 * ```
 */
export class RouteConfigError extends SignalyardError<RouteConfigErrorCode> {
  private readonly [marker] = true;
  /** Every invalid route found, in tier then list order. */
  readonly problems: readonly RouteProblem[];
  /** The tier of the first problem (`undefined` when the routes were not an object). */
  readonly tier: Tier | undefined;
  /** The index (in its tier's list) of the first problem's route (`undefined` when the routes were not an object). */
  readonly index: number | undefined;

  /**
   * @param options `problems`: every invalid route; or, for routes that are not an object at all,
   *   no problem and the `message` that says so.
   */
  constructor(options: { problems: readonly RouteProblem[]; message?: string }) {
    const problems = Object.freeze(options.problems.map((p) => Object.freeze({ ...p })));
    const first = problems[0];
    super({
      code: 'ROUTE_INVALID',
      message:
        options.message ??
        (problems.length <= 1
          ? `Invalid route ${first?.tier ?? 'agent'}[${first?.index ?? 0}]: ${first?.message ?? 'invalid route'}`
          : `Invalid routes (${problems.length} problems):\n${problems.map((p) => `  ${p.tier}[${p.index}]: ${p.message}`).join('\n')}`),
    });
    this.problems = problems;
    this.tier = first?.tier;
    this.index = first?.index;
  }

  /** True when `error` is a `RouteConfigError`, from any installed copy of the router. */
  static override isInstance(error: unknown): error is RouteConfigError {
    return hasErrorMarker(error, marker);
  }
}

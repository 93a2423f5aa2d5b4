import { SignalyardError, hasErrorMarker, type Tier } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.RouteConfigError');

/** One invalid route: its tier, its index in that tier's list, and what is wrong with it. */
export interface RouteProblem {
  readonly tier: Tier;
  readonly index: number;
  readonly message: string;
}

/**
 * Routes given to a `ComposedRouter` are malformed (code `ROUTE_INVALID`): an unknown kind
 * shape, a non-integer or non-finite priority, a predicate that is not a function, or a
 * malformed action. Lists every problem; `tier` and `index` name the first.
 */
export class RouteConfigError extends SignalyardError {
  private readonly [marker] = true;
  /** Every invalid route found, in tier then list order. */
  readonly problems: readonly RouteProblem[];
  /** The tier of the first problem. */
  readonly tier: Tier;
  /** The index (in its tier's list) of the first problem's route. */
  readonly index: number;

  constructor(options: { problems: readonly RouteProblem[] }) {
    const problems = Object.freeze(options.problems.map((p) => Object.freeze({ ...p })));
    const first = problems[0] ?? { tier: 'agent' as const, index: 0, message: 'invalid route' };
    super({
      code: 'ROUTE_INVALID',
      message:
        problems.length <= 1
          ? `Invalid route ${first.tier}[${first.index}]: ${first.message}`
          : `Invalid routes (${problems.length} problems):\n${problems.map((p) => `  ${p.tier}[${p.index}]: ${p.message}`).join('\n')}`,
    });
    this.problems = problems;
    this.tier = first.tier;
    this.index = first.index;
  }

  /** True when `error` is a `RouteConfigError`, from any installed copy of the router. */
  static override isInstance(error: unknown): error is RouteConfigError {
    return hasErrorMarker(error, marker);
  }
}

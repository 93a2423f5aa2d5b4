import { actionProblem } from '@signalyard/core/internal';
import {
  describeValue,
  isSignalKind,
  type Action,
  type ConsideredRoute,
  type ExecutionStrategy,
  type Plugin,
  type RouteContext,
  type Signal,
  type SignalRoute,
  type Tier,
} from '@signalyard/core';
import { RouteConfigError, type RouteProblem } from './errors/route-config-error.js';
import { RoutePredicateError } from './errors/route-predicate-error.js';
import { RouterArgumentError } from './errors/router-argument-error.js';

/** The full routing decision for one signal, for tooling, logs and tests. */
export interface RouteDecision {
  /** The action taken; `undefined` = unrouted. Always equal to what `route()` returns. */
  readonly action: Action | undefined;
  /** The tier that decided. */
  readonly tier: Tier | undefined;
  /** The winning route, as registered. */
  readonly route: SignalRoute | undefined;
  /** Every route of the signal's kind that was looked at, in evaluation order, with why it did or didn't win. */
  readonly considered: readonly ConsideredRoute[];
}

/** The winning route of a decision: its action, tier and the route itself (as registered). */
export interface RouteMatch {
  /** The action to apply. */
  readonly action: Action;
  /** The tier of the route that decided. */
  readonly tier: Tier;
  /** The route that decided. */
  readonly route: SignalRoute;
}

/** The routes of each tier, as given to the {@link ComposedRouter} constructor. */
export interface TierRoutes {
  /** Routes of the execution strategy (searched first). */
  readonly strategy?: readonly SignalRoute[];
  /** The agent's own routes (searched second). */
  readonly agent?: readonly SignalRoute[];
  /** Every plugin's routes (searched last). */
  readonly plugin?: readonly SignalRoute[];
}

/** The parts {@link ComposedRouter.compose} reads routes from. */
export interface ComposeParts {
  /** The strategy whose `signalRoutes()` form the strategy tier. */
  readonly strategy?: ExecutionStrategy;
  /** The agent's own routes: the agent tier. */
  readonly agent?: readonly SignalRoute[];
  /** The plugins whose routes form the plugin tier, in order. */
  readonly plugins?: readonly Plugin[];
}

interface CompiledRoute {
  readonly match: RouteMatch;
  readonly tier: Tier;
  readonly rank: number; // 0 strategy, 1 agent, 2 plugin
  readonly route: SignalRoute;
  readonly predicate: SignalRoute['predicate'];
  readonly action: Action;
  readonly label: string;
}

const TIERS: readonly Tier[] = ['strategy', 'agent', 'plugin'];
const EMPTY_CONTEXT: RouteContext = Object.freeze({});
const NO_ROUTES: readonly SignalRoute[] = Object.freeze([]);

/** Internal: per-route origin labels supplied by `compose()` for error messages. */
const ORIGINS = Symbol('origins');
type TierRoutesWithOrigins = TierRoutes & { [ORIGINS]?: Partial<Record<Tier, readonly string[]>> };

/**
 * The three-tier signal router: a strategy route beats an agent route beats a plugin route,
 * whatever their priorities; within a tier the highest `priority` wins, and ties go to the
 * route registered first.
 *
 * Immutable after construction. The constructor validates every route (throwing
 * {@link RouteConfigError}) and indexes them by kind, pre-sorted, so `route()` touches only
 * the candidate routes of the signal's kind and allocates nothing.
 *
 * A predicate that throws makes `route()` throw {@link RoutePredicateError}: it never counts as
 * a non-match, so a crash cannot let a gated signal fall through to a lower tier.
 *
 * @example
 * ```ts
 * const router = new ComposedRouter({
 *   strategy: [{ kind: SignalKind.UserMessage, action: Action.reject('busy'), predicate: () => busy }],
 *   agent: [{ kind: SignalKind.UserMessage, action: Action.Continue, priority: 100 }],
 * });
 * router.route(signal(SignalKind.UserMessage, 'hi'));   // reject('busy') while busy, else continue
 * ```
 */
export class ComposedRouter {
  readonly #byKind: Map<string, readonly CompiledRoute[]>;
  readonly #registered: ReadonlyMap<Tier, readonly SignalRoute[]>;

  /**
   * @param routes The routes of each tier; absent tiers are empty.
   * @throws RouteConfigError `ROUTE_INVALID` listing every malformed route, or (with no problem
   *   listed) when `routes` is not an object.
   */
  constructor(routes: TierRoutes = {}) {
    if (typeof routes !== 'object' || (routes as unknown) === null) {
      throw new RouteConfigError({
        problems: [],
        message: `Invalid router routes ${describeValue(routes)}: expected an object { strategy?, agent?, plugin? }`,
      });
    }
    const origins = (routes as TierRoutesWithOrigins)[ORIGINS];
    const problems: RouteProblem[] = [];
    const registered = new Map<Tier, readonly SignalRoute[]>();
    const compiled: CompiledRoute[] = [];
    for (let rank = 0; rank < TIERS.length; rank++) {
      const tier = TIERS[rank] as Tier;
      const list: unknown = routes[tier];
      if (list === undefined) {
        registered.set(tier, NO_ROUTES);
        continue;
      }
      if (!Array.isArray(list)) {
        problems.push({
          tier,
          index: -1,
          message: `the ${tier} tier must be an array of routes, got ${describeValue(list)}`,
        });
        continue;
      }
      registered.set(tier, Object.freeze([...(list as SignalRoute[])]));
      for (let index = 0; index < list.length; index++) {
        const route: unknown = list[index];
        const origin = origins?.[tier]?.[index];
        const problem = routeProblem(route);
        if (problem !== undefined) {
          problems.push({ tier, index, message: origin === undefined ? problem : `${problem} (from ${origin})` });
          continue;
        }
        const r = route as SignalRoute;
        compiled.push({
          match: Object.freeze({ action: r.action, tier, route: r }),
          tier,
          rank,
          route: r,
          predicate: r.predicate,
          action: r.action,
          label: r.name !== undefined && r.name !== '' ? r.name : `${r.kind}#${index}`,
        });
      }
    }
    if (problems.length > 0) throw new RouteConfigError({ problems });

    // One bucket per kind holding every tier's routes in evaluation order: tier, then priority
    // (descending), then registration order. The first match in a bucket is the decision:
    // the first tier with any match decides, and within it the highest-ranked match wins.
    const order = new Map<CompiledRoute, number>(compiled.map((c, i) => [c, i]));
    const byKind = new Map<string, CompiledRoute[]>();
    for (const c of compiled) {
      let bucket = byKind.get(c.route.kind);
      if (bucket === undefined) byKind.set(c.route.kind, (bucket = []));
      bucket.push(c);
    }
    for (const bucket of byKind.values()) {
      bucket.sort(
        (a, b) =>
          a.rank - b.rank ||
          (b.route.priority ?? 0) - (a.route.priority ?? 0) ||
          (order.get(a) ?? 0) - (order.get(b) ?? 0),
      );
      Object.freeze(bucket);
    }
    this.#byKind = byKind;
    this.#registered = registered;
  }

  /**
   * Builds a router from an execution strategy's routes (strategy tier), an agent's own routes
   * (agent tier) and every plugin's routes, in plugin order (plugin tier). Reads
   * `strategy.signalRoutes()` and each plugin's `signalRoutes()` once.
   *
   * @throws RouteConfigError `ROUTE_INVALID` listing every malformed route (plugin routes name their
   * plugin), and a plugin that is not an object with a string `name` or whose `signalRoutes` is
   * not a function returning a list.
   * @example
   * ```ts
   * const router = ComposedRouter.compose({ strategy: fsm, agent: agentRoutes, plugins: [rateLimit] });
   * ```
   */
  static compose(parts: ComposeParts = {}): ComposedRouter {
    const strategy = parts.strategy === undefined ? NO_ROUTES : parts.strategy.signalRoutes();
    const plugin: SignalRoute[] = [];
    const pluginOrigins: string[] = [];
    for (const p of parts.plugins ?? []) {
      const routes = pluginRoutes(p, plugin.length);
      for (const r of routes) {
        plugin.push(r);
        pluginOrigins.push(`plugin ${JSON.stringify(p.name)}`);
      }
    }
    const input: TierRoutesWithOrigins = { strategy, plugin, [ORIGINS]: { plugin: pluginOrigins } };
    if (parts.agent !== undefined) return new ComposedRouter({ ...input, agent: parts.agent });
    return new ComposedRouter(input);
  }

  /**
   * The action for `signal`, or `undefined` when no route matches (unrouted). `ctx` is passed
   * to every predicate evaluated (`{}` when omitted).
   *
   * @throws RoutePredicateError `ROUTE_PREDICATE_FAILED` when a predicate evaluated throws;
   *   RouterArgumentError `ROUTE_SIGNAL_INVALID` when `signal` is not a signal object.
   */
  route(signal: Signal, ctx?: RouteContext): Action | undefined {
    return this.match(signal, ctx)?.action;
  }

  /**
   * Like {@link ComposedRouter.route}, but returns the winning route with its tier (a frozen
   * object per route: nothing is allocated), or `undefined` when unrouted. What a runner uses to
   * report which route decided.
   *
   * @throws RoutePredicateError `ROUTE_PREDICATE_FAILED` when a predicate evaluated throws;
   *   RouterArgumentError `ROUTE_SIGNAL_INVALID` when `signal` is not a signal object.
   */
  match(signal: Signal, ctx?: RouteContext): RouteMatch | undefined {
    if (typeof signal !== 'object' || (signal as unknown) === null) throw invalidSignal(signal);
    const bucket = this.#byKind.get(signal.kind);
    if (bucket === undefined) {
      // Only on a miss: a kind that is a key of the index is a string.
      if (typeof signal.kind !== 'string') throw invalidSignal(signal);
      return undefined;
    }
    const context = ctx ?? EMPTY_CONTEXT;
    for (let i = 0; i < bucket.length; i++) {
      const c = bucket[i] as CompiledRoute;
      const predicate = c.predicate;
      if (predicate === undefined) return c.match;
      let matched: unknown;
      try {
        matched = predicate(signal, context);
      } catch (error) {
        throw new RoutePredicateError({ tier: c.tier, route: c.route, routeName: c.label, cause: error });
      }
      if (matched === true) return c.match;
    }
    return undefined;
  }

  /**
   * The full decision for `signal`: the action (always what `route()` returns), the deciding
   * tier and route, and every route of the signal's kind in evaluation order with its outcome:
   * `matched` (the winner), `predicate_false`, `outranked` (in the winning tier, ranked below
   * the winner, and matching too — or throwing, reported in `error`, since `route()` never
   * evaluates it), or `shadowed_by_higher_tier` (a lower tier, not evaluated). Predicates are
   * evaluated again, so they must not change state.
   *
   * @throws RoutePredicateError when a predicate that `route()` would evaluate throws;
   *   RouterArgumentError `ROUTE_SIGNAL_INVALID` when `signal` is not a signal object.
   */
  explain(signal: Signal, ctx?: RouteContext): RouteDecision {
    if (typeof signal !== 'object' || (signal as unknown) === null || typeof signal.kind !== 'string')
      throw invalidSignal(signal);
    const bucket = this.#byKind.get(signal.kind) ?? [];
    const context = ctx ?? EMPTY_CONTEXT;
    const considered: ConsideredRoute[] = [];
    let winner: CompiledRoute | undefined;
    for (const c of bucket) {
      if (winner !== undefined && c.rank > winner.rank) {
        considered.push({ tier: c.tier, route: c.route, outcome: 'shadowed_by_higher_tier' });
        continue;
      }
      let matched: unknown;
      try {
        matched = c.predicate === undefined ? true : c.predicate(signal, context);
      } catch (error) {
        if (winner === undefined)
          throw new RoutePredicateError({ tier: c.tier, route: c.route, routeName: c.label, cause: error });
        considered.push({ tier: c.tier, route: c.route, outcome: 'outranked', error });
        continue;
      }
      if (matched !== true) {
        considered.push({ tier: c.tier, route: c.route, outcome: 'predicate_false' });
      } else if (winner === undefined) {
        winner = c;
        considered.push({ tier: c.tier, route: c.route, outcome: 'matched' });
      } else {
        considered.push({ tier: c.tier, route: c.route, outcome: 'outranked' });
      }
    }
    return {
      action: winner?.action,
      tier: winner?.tier,
      route: winner?.route,
      considered,
    };
  }

  /**
   * The routes of `tier`, as registered (for tooling).
   * @throws RouterArgumentError `ROUTE_TIER_INVALID` for a name that is not a tier.
   */
  routes(tier: Tier): readonly SignalRoute[] {
    const routes = this.#registered.get(tier);
    if (routes === undefined) {
      throw new RouterArgumentError({
        code: 'ROUTE_TIER_INVALID',
        message: `Unknown tier ${JSON.stringify(tier)}: expected "strategy", "agent" or "plugin"`,
        value: tier,
      });
    }
    return routes;
  }
}

function routeProblem(route: unknown): string | undefined {
  if (typeof route !== 'object' || route === null)
    return `expected a route object, got ${route === null ? 'null' : typeof route}`;
  const r = route as Record<string, unknown>;
  if (!isSignalKind(r.kind)) {
    return `kind ${describeValue(r.kind)} is not a signal kind: expected "user_message", "tool_result", "tool_approval", "stop", "timer" or "custom:<name>"`;
  }
  if (r.predicate !== undefined && typeof r.predicate !== 'function') {
    return `predicate must be a function, got ${r.predicate === null ? 'null' : typeof r.predicate}`;
  }
  const action = actionProblem(r.action);
  if (action !== undefined) return `action: ${action}`;
  const priority = r.priority;
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isInteger(priority))) {
    return `priority must be a finite integer, got ${typeof priority === 'number' ? String(priority) : typeof priority}`;
  }
  if (r.name !== undefined && typeof r.name !== 'string') return `name must be a string, got ${typeof r.name}`;
  return undefined;
}

/** A plugin's routes, read once; `index` is where they would start in the plugin tier (for the error). */
function pluginRoutes(p: unknown, index: number): readonly SignalRoute[] {
  const fail = (message: string): never => {
    throw new RouteConfigError({ problems: [{ tier: 'plugin', index, message }] });
  };
  if (typeof p !== 'object' || p === null) return fail(`expected a Plugin object, got ${describeValue(p)}`);
  const { name, signalRoutes } = p as { name?: unknown; signalRoutes?: unknown };
  if (typeof name !== 'string') return fail(`a plugin's name must be a string, got ${describeValue(name)}`);
  if (signalRoutes === undefined) return NO_ROUTES;
  if (typeof signalRoutes !== 'function')
    return fail(`plugin ${JSON.stringify(name)} signalRoutes must be a function, got ${describeValue(signalRoutes)}`);
  const routes: unknown = (signalRoutes as () => unknown).call(p);
  if (!Array.isArray(routes))
    return fail(`plugin ${JSON.stringify(name)} signalRoutes() returned ${typeof routes}, expected an array`);
  return routes as readonly SignalRoute[];
}

function invalidSignal(value: unknown): RouterArgumentError {
  return new RouterArgumentError({
    code: 'ROUTE_SIGNAL_INVALID',
    message:
      typeof value === 'object' && value !== null
        ? `Cannot route a signal whose kind is ${describeValue((value as { kind?: unknown }).kind)}: expected a Signal { kind, payload } with a string kind`
        : `Cannot route ${value === null ? 'null' : typeof value}: expected a Signal { kind, payload }`,
    value,
  });
}

// Property tests: the router against a brute-force reference written from design/router.md,
// and the tier-authority invariant.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Action, signal, type Signal, type SignalKind, type SignalRoute, type Tier } from '@signalyard/core';
import { ComposedRouter, RoutePredicateError, type RouteOutcome } from '@signalyard/router';
import { TIERS } from './support.js';

/** Kinds routes are drawn from; `custom:stop` sits next to `stop` to exercise exact comparison. */
const ROUTE_KINDS: readonly SignalKind[] = ['user_message', 'stop', 'custom:stop', 'timer'];
/** Kinds signals are drawn from: the route kinds plus one that never has a route. */
const SIGNAL_KINDS: readonly SignalKind[] = [...ROUTE_KINDS, 'tool_result'];

interface Payload {
  readonly n: number;
}

/** How a generated route decides: no predicate, `n mod m === r`, the same test but answering a truthy non-`true`, or a throw. */
type PredicateSpec =
  | { readonly type: 'none' }
  | { readonly type: 'mod'; readonly m: number; readonly r: number }
  | { readonly type: 'truthy'; readonly m: number; readonly r: number }
  | { readonly type: 'throws' };

interface RouteSpec {
  readonly kind: SignalKind;
  readonly priority: number | undefined;
  readonly predicate: PredicateSpec;
}

type TierSpecs = Readonly<Record<Tier, readonly RouteSpec[]>>;

const modArb = fc
  .integer({ min: 1, max: 4 })
  .chain((m) => fc.record({ m: fc.constant(m), r: fc.integer({ min: 0, max: m - 1 }) }));

const predicateArb = (withThrows: boolean): fc.Arbitrary<PredicateSpec> =>
  fc.oneof(
    { arbitrary: fc.constant({ type: 'none' } as const), weight: 3 },
    { arbitrary: modArb.map(({ m, r }) => ({ type: 'mod', m, r }) as const), weight: 4 },
    { arbitrary: modArb.map(({ m, r }) => ({ type: 'truthy', m, r }) as const), weight: 1 },
    { arbitrary: fc.constant({ type: 'throws' } as const), weight: withThrows ? 1 : 0 },
  );

const routeSpecArb = (withThrows: boolean): fc.Arbitrary<RouteSpec> =>
  fc.record({
    kind: fc.constantFrom(...ROUTE_KINDS),
    // Small ranges make ties frequent; the wide range and `undefined` (= 0) cover the rest.
    priority: fc.oneof(
      fc.integer({ min: -2, max: 2 }),
      fc.integer({ min: -1_000_000, max: 1_000_000 }),
      fc.constant(undefined),
    ),
    predicate: predicateArb(withThrows),
  });

const tiersArb = (withThrows: boolean, maxLength = 6): fc.Arbitrary<TierSpecs> =>
  fc.record({
    strategy: fc.array(routeSpecArb(withThrows), { maxLength }),
    agent: fc.array(routeSpecArb(withThrows), { maxLength }),
    plugin: fc.array(routeSpecArb(withThrows), { maxLength }),
  });

const signalsArb: fc.Arbitrary<Signal<Payload>[]> = fc.array(
  fc
    .record({ kind: fc.constantFrom(...SIGNAL_KINDS), n: fc.integer({ min: -12, max: 12 }) })
    .map(({ kind, n }) => signal(kind, { n })),
  { minLength: 1, maxLength: 8 },
);

const mod = (n: number, m: number): number => ((n % m) + m) % m;

/** A thrown value the tests can recognise as coming from a generated route. */
class PlannedCrash extends Error {}

/** Builds real routes; every route gets its own action object, so identity tells routes apart. */
function build(specs: TierSpecs, tag = ''): Record<Tier, SignalRoute[]> {
  const make = (tier: Tier) =>
    specs[tier].map((spec, i): SignalRoute => {
      const name = `${tag}${tier}#${i}`;
      const base = {
        kind: spec.kind,
        name,
        action: Action.custom(name),
        ...(spec.priority === undefined ? {} : { priority: spec.priority }),
      };
      const p = spec.predicate;
      switch (p.type) {
        case 'none':
          return base;
        case 'mod':
          return { ...base, predicate: (s) => mod((s.payload as Payload).n, p.m) === p.r };
        case 'truthy':
          return {
            ...base,
            predicate: (s) => (mod((s.payload as Payload).n, p.m) === p.r ? (1 as unknown as boolean) : false),
          };
        case 'throws':
          return {
            ...base,
            predicate: () => {
              throw new PlannedCrash(name);
            },
          };
      }
    });
  return { strategy: make('strategy'), agent: make('agent'), plugin: make('plugin') };
}

type Expected =
  | { readonly type: 'routed'; readonly tier: Tier; readonly route: SignalRoute }
  | { readonly type: 'unrouted' }
  | { readonly type: 'throws'; readonly tier: Tier; readonly route: SignalRoute };

const priorityOf = (r: SignalRoute): number => r.priority ?? 0;

/** `a` ranks above `b` in one tier: higher priority, or equal priority and registered first. */
const ranksAbove = (routes: readonly SignalRoute[], a: SignalRoute, b: SignalRoute): boolean =>
  priorityOf(a) > priorityOf(b) || (priorityOf(a) === priorityOf(b) && routes.indexOf(a) < routes.indexOf(b));

/**
 * The contract, brute force: the first tier with any matching route decides; within it the
 * highest priority wins, ties to the route registered first. A predicate matches only when it
 * returns exactly `true`. A throwing predicate is never a non-match: routing throws if one ranks
 * above what would otherwise be the decision (in the deciding tier or a tier before it).
 */
function reference(routes: Record<Tier, readonly SignalRoute[]>, s: Signal): Expected {
  for (const tier of TIERS) {
    const list = routes[tier];
    const candidates = list.filter((r) => r.kind === s.kind);
    let best: SignalRoute | undefined;
    const crashes: SignalRoute[] = [];
    for (const r of candidates) {
      let matched: unknown = true;
      if (r.predicate !== undefined) {
        try {
          matched = r.predicate(s, {});
        } catch (error) {
          if (!(error instanceof PlannedCrash)) throw error;
          crashes.push(r);
          continue;
        }
      }
      if (matched !== true) continue;
      if (best === undefined || priorityOf(r) > priorityOf(best)) best = r;
    }
    const above = best === undefined ? crashes : crashes.filter((c) => ranksAbove(list, c, best));
    if (above.length > 0) {
      const first = above.reduce((x, y) => (ranksAbove(list, y, x) ? y : x));
      return { type: 'throws', tier, route: first };
    }
    if (best !== undefined) return { type: 'routed', tier, route: best };
  }
  return { type: 'unrouted' };
}

/** The contract's `considered`, brute force, for a signal that does not throw. */
function referenceConsidered(
  routes: Record<Tier, readonly SignalRoute[]>,
  s: Signal,
  decided: Tier | undefined,
): string[] {
  const out: string[] = [];
  let winnerFound = false;
  for (const tier of TIERS) {
    const list = routes[tier];
    // Stable sort: priority descending, registration order among equals.
    const ordered = list.filter((r) => r.kind === s.kind).sort((a, b) => priorityOf(b) - priorityOf(a));
    for (const r of ordered) {
      let outcome: RouteOutcome;
      if (decided !== undefined && TIERS.indexOf(tier) > TIERS.indexOf(decided)) {
        outcome = 'shadowed_by_higher_tier';
      } else {
        let matched: unknown = true;
        let crashed = false;
        if (r.predicate !== undefined) {
          try {
            matched = r.predicate(s, {});
          } catch {
            crashed = true;
          }
        }
        if (crashed)
          outcome = 'outranked'; // only reachable below the winner
        else if (matched !== true) outcome = 'predicate_false';
        else if (!winnerFound) {
          outcome = 'matched';
          winnerFound = true;
        } else outcome = 'outranked';
      }
      out.push(`${tier}:${r.name ?? ''}:${outcome}`);
    }
  }
  return out;
}

function expectedTier(routes: Record<Tier, readonly SignalRoute[]>, s: Signal): Tier | undefined {
  const expected = reference(routes, s);
  return expected.type === 'routed' ? expected.tier : undefined;
}

function attempt<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

describe('router properties', () => {
  it('route() equals the brute-force reference for any routes and signals (without throwing predicates)', () => {
    fc.assert(
      fc.property(tiersArb(false), signalsArb, (specs, signals) => {
        const routes = build(specs);
        const router = new ComposedRouter(routes);
        for (const s of signals) {
          const expected = reference(routes, s);
          const actual = router.route(s);
          if (expected.type === 'routed') expect(actual).toBe(expected.route.action);
          else expect(actual).toBeUndefined();
        }
      }),
      { numRuns: 500 },
    );
  });

  it('route() equals the reference when predicates may throw: a throw is never a non-match', () => {
    fc.assert(
      fc.property(tiersArb(true), signalsArb, (specs, signals) => {
        const routes = build(specs);
        const router = new ComposedRouter(routes);
        for (const s of signals) {
          const expected = reference(routes, s);
          const actual = attempt(() => router.route(s));
          if (expected.type === 'throws') {
            expect(actual.ok).toBe(false);
            const error = (actual as { error: unknown }).error;
            expect(RoutePredicateError.isInstance(error)).toBe(true);
            const e = error as RoutePredicateError;
            expect(e.tier).toBe(expected.tier);
            expect(e.route).toBe(expected.route);
            expect(e.routeName).toBe(expected.route.name);
            expect(e.cause).toBeInstanceOf(PlannedCrash);
          } else {
            expect(actual).toEqual({ ok: true, value: expected.type === 'routed' ? expected.route.action : undefined });
            if (actual.ok && expected.type === 'routed') expect(actual.value).toBe(expected.route.action);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('explain() agrees with route(): same action, the matched entry is the winning route, outcomes as the contract says', () => {
    fc.assert(
      fc.property(tiersArb(true), signalsArb, (specs, signals) => {
        const routes = build(specs);
        const router = new ComposedRouter(routes);
        for (const s of signals) {
          const routed = attempt(() => router.route(s));
          const explained = attempt(() => router.explain(s));
          expect(explained.ok).toBe(routed.ok);
          if (!routed.ok || !explained.ok) {
            // Both throw, naming the same route.
            expect((explained as { error: RoutePredicateError }).error.route).toBe(
              (routed as { error: RoutePredicateError }).error.route,
            );
            continue;
          }
          const decision = explained.value;
          expect(decision.action).toBe(routed.value);
          const matched = decision.considered.filter((c) => c.outcome === 'matched');
          if (routed.value === undefined) {
            expect(matched).toHaveLength(0);
            expect(decision.tier).toBeUndefined();
            expect(decision.route).toBeUndefined();
          } else {
            expect(matched).toHaveLength(1);
            expect(matched[0]?.route).toBe(decision.route);
            expect(matched[0]?.tier).toBe(decision.tier);
            expect(decision.route?.action).toBe(routed.value);
            expect(routes[decision.tier as Tier]).toContain(decision.route);
          }
          expect(decision.considered.map((c) => `${c.tier}:${c.route.name ?? ''}:${c.outcome}`)).toEqual(
            referenceConsidered(routes, s, expectedTier(routes, s)),
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('tier authority: adding any routes to lower tiers never changes a decision made by a higher tier', () => {
    fc.assert(
      fc.property(
        tiersArb(true),
        tiersArb(true, 4),
        signalsArb,
        fc.boolean(),
        (specs, extraSpecs, signals, prepend) => {
          const routes = build(specs);
          const extra = build(extraSpecs, 'extra-');
          const router = new ComposedRouter(routes);
          for (const s of signals) {
            const before = attempt(() => router.explain(s));
            if (!before.ok || before.value.tier === undefined) continue;
            const decidedBy = TIERS.indexOf(before.value.tier);
            const grown: Record<Tier, SignalRoute[]> = { ...routes };
            for (const tier of TIERS.slice(decidedBy + 1)) {
              grown[tier] = prepend ? [...extra[tier], ...routes[tier]] : [...routes[tier], ...extra[tier]];
            }
            // Lower tiers are not consulted: not even their throwing predicates run.
            expect(new ComposedRouter(grown).route(s)).toBe(before.value.action);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('adding routes of other kinds never changes a decision', () => {
    fc.assert(
      fc.property(tiersArb(false), tiersArb(true, 4), signalsArb, (specs, extraSpecs, signals) => {
        const routes = build(specs);
        const extra = build(extraSpecs, 'extra-');
        const router = new ComposedRouter(routes);
        for (const s of signals) {
          const others = (tier: Tier) => extra[tier].filter((r) => r.kind !== s.kind);
          const grown = new ComposedRouter({
            strategy: [...others('strategy'), ...routes.strategy],
            agent: [...routes.agent, ...others('agent')],
            plugin: [...others('plugin'), ...routes.plugin],
          });
          expect(grown.route(s)).toBe(router.route(s));
        }
      }),
      { numRuns: 200 },
    );
  });
});

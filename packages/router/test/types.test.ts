// Type tests: checked by `tsc -b packages/router` (expectTypeOf is a no-op at run time).
import { describe, expectTypeOf, it } from 'vitest';
import {
  Action,
  SignalKind,
  signal,
  type ExecutionStrategy,
  type Plugin,
  type RouteContext as CoreRouteContext,
  type Signal,
  type SignalRoute,
  type Tier as CoreTier,
} from '@signalyard/core';
import {
  ComposedRouter,
  type RouteConfigError,
  type RouteConfigErrorCode,
  type RoutePredicateError,
  type RoutePredicateErrorCode,
  type RouterArgumentError,
  type RouterArgumentErrorCode,
  type ComposeParts,
  type ConsideredRoute,
  type RouteContext,
  type RouteDecision,
  type RouteOutcome,
  type RouteProblem,
  type Tier,
  type TierRoutes,
} from '@signalyard/router';

const router = new ComposedRouter({ agent: [{ kind: SignalKind.UserMessage, action: Action.Continue }] });

describe('public types', () => {
  it('route() takes a Signal and an optional RouteContext and returns Action | undefined', () => {
    expectTypeOf(router.route(signal(SignalKind.UserMessage, 'hi'))).toEqualTypeOf<Action | undefined>();
    expectTypeOf<ComposedRouter['route']>().parameters.toEqualTypeOf<[signal: Signal, ctx?: RouteContext]>();
    expectTypeOf<ComposedRouter['route']>().returns.toEqualTypeOf<Action | undefined>();
  });

  it('explain() returns a RouteDecision with action, tier, route and considered', () => {
    expectTypeOf<ComposedRouter['explain']>().returns.toEqualTypeOf<RouteDecision>();
    expectTypeOf<RouteDecision['action']>().toEqualTypeOf<Action | undefined>();
    expectTypeOf<RouteDecision['tier']>().toEqualTypeOf<Tier | undefined>();
    expectTypeOf<RouteDecision['route']>().toEqualTypeOf<SignalRoute | undefined>();
    expectTypeOf<RouteDecision['considered']>().toEqualTypeOf<readonly ConsideredRoute[]>();
    expectTypeOf<RouteDecision['considered']>().not.toExtend<ConsideredRoute[]>();
    expectTypeOf<ConsideredRoute>().toExtend<{
      readonly tier: Tier;
      readonly route: SignalRoute;
      readonly outcome: RouteOutcome;
    }>();
    expectTypeOf<ConsideredRoute['tier']>().toEqualTypeOf<Tier>();
    expectTypeOf<ConsideredRoute['route']>().toEqualTypeOf<SignalRoute>();
    expectTypeOf<ConsideredRoute['outcome']>().toEqualTypeOf<RouteOutcome>();
    expectTypeOf<RouteOutcome>().toEqualTypeOf<
      'matched' | 'predicate_false' | 'outranked' | 'shadowed_by_higher_tier'
    >();
  });

  it('a RouteDecision is read-only', () => {
    const decision = router.explain(signal(SignalKind.UserMessage));
    // @ts-expect-error -- a decision's fields are readonly
    decision.action = Action.ForceStop;
    expectTypeOf(decision).toEqualTypeOf<RouteDecision>();
  });

  it('routes() takes a Tier and returns the readonly registered routes', () => {
    expectTypeOf<ComposedRouter['routes']>().parameters.toEqualTypeOf<[tier: Tier]>();
    expectTypeOf<ComposedRouter['routes']>().returns.toEqualTypeOf<readonly SignalRoute[]>();
    // @ts-expect-error -- 'agents' is not a tier
    const bad = () => router.routes('agents');
    expectTypeOf(bad).returns.toEqualTypeOf<readonly SignalRoute[]>();
  });

  it('Tier and RouteContext are core\u2019s, re-exported', () => {
    expectTypeOf<Tier>().toEqualTypeOf<CoreTier>();
    expectTypeOf<Tier>().toEqualTypeOf<'strategy' | 'agent' | 'plugin'>();
    expectTypeOf<RouteContext>().toEqualTypeOf<CoreRouteContext>();
    expectTypeOf<RouteContext>().toEqualTypeOf<{ readonly sessionKey?: string; readonly agentId?: string }>();
  });

  it('the constructor takes optional per-tier route lists; compose() takes a strategy, agent routes and plugins', () => {
    expectTypeOf(ComposedRouter).constructorParameters.toEqualTypeOf<[routes?: TierRoutes]>();
    expectTypeOf<TierRoutes>().toEqualTypeOf<{
      readonly strategy?: readonly SignalRoute[];
      readonly agent?: readonly SignalRoute[];
      readonly plugin?: readonly SignalRoute[];
    }>();
    expectTypeOf<typeof ComposedRouter.compose>().parameters.toEqualTypeOf<[parts?: ComposeParts]>();
    expectTypeOf<typeof ComposedRouter.compose>().returns.toEqualTypeOf<ComposedRouter>();
    expectTypeOf<ComposeParts>().toEqualTypeOf<{
      readonly strategy?: ExecutionStrategy;
      readonly agent?: readonly SignalRoute[];
      readonly plugins?: readonly Plugin[];
    }>();
  });

  it('a predicate takes the signal and the RouteContext and must return boolean', () => {
    expectTypeOf<NonNullable<SignalRoute['predicate']>>().toEqualTypeOf<
      (signal: Signal, ctx: CoreRouteContext) => boolean
    >();
    const ok: SignalRoute = {
      kind: SignalKind.UserMessage,
      action: Action.Continue,
      predicate: (_s, ctx) => ctx.agentId === 'a',
    };
    // @ts-expect-error -- a predicate returning a string is not a predicate
    const notBoolean: SignalRoute = { kind: SignalKind.UserMessage, action: Action.Continue, predicate: () => 'yes' };
    // @ts-expect-error -- 'message' is not a signal kind
    const badKind: SignalRoute = { kind: 'message', action: Action.Continue };
    expectTypeOf([ok, notBoolean, badKind]).toEqualTypeOf<SignalRoute[]>();
  });

  it('the error classes expose their structured fields and isInstance narrows to them', () => {
    expectTypeOf<typeof RouteConfigError.isInstance>().guards.toEqualTypeOf<RouteConfigError>();
    expectTypeOf<typeof RoutePredicateError.isInstance>().guards.toEqualTypeOf<RoutePredicateError>();
    expectTypeOf<RouteConfigError['problems']>().toEqualTypeOf<readonly RouteProblem[]>();
    expectTypeOf<RouteProblem>().toEqualTypeOf<{
      readonly tier: Tier;
      readonly index: number;
      readonly message: string;
    }>();
    expectTypeOf<RoutePredicateError['tier']>().toEqualTypeOf<Tier>();
    expectTypeOf<RoutePredicateError['routeName']>().toEqualTypeOf<string>();
    expectTypeOf<RoutePredicateError['route']>().toEqualTypeOf<SignalRoute>();
    // Each class owns a typed union of its codes, so a switch over `code` is checked.
    expectTypeOf<RoutePredicateError['code']>().toEqualTypeOf<RoutePredicateErrorCode>();
    expectTypeOf<RoutePredicateErrorCode>().toEqualTypeOf<'ROUTE_PREDICATE_FAILED'>();
    expectTypeOf<RouteConfigError['code']>().toEqualTypeOf<RouteConfigErrorCode>();
    expectTypeOf<RouteConfigErrorCode>().toEqualTypeOf<'ROUTE_INVALID'>();
    expectTypeOf<typeof RouterArgumentError.isInstance>().guards.toEqualTypeOf<RouterArgumentError>();
    expectTypeOf<RouterArgumentError['code']>().toEqualTypeOf<RouterArgumentErrorCode>();
    // One owner class per code: ROUTE_INVALID is RouteConfigError's (routes that are not an object included).
    expectTypeOf<RouterArgumentErrorCode>().toEqualTypeOf<'ROUTE_TIER_INVALID' | 'ROUTE_SIGNAL_INVALID'>();
    expectTypeOf<RouteConfigError['tier']>().toEqualTypeOf<Tier | undefined>();
    expectTypeOf<RouterArgumentError['value']>().toBeUnknown();
  });
});

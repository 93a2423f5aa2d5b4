import { describe, expect, it, vi } from 'vitest';
import {
  Action,
  SignalKind,
  SignalyardError,
  signal,
  type RouteContext,
  type Signal,
  type SignalRoute,
} from '@signalyard/core';
import { ComposedRouter, RoutePredicateError, type RouteDecision } from '@signalyard/router';
import { catchError } from './support.js';

const { UserMessage, Stop, Timer } = SignalKind;

/** `considered` as `tier:name:outcome` strings, for readable comparisons. */
function outcomes(decision: RouteDecision): string[] {
  return decision.considered.map((c) => `${c.tier}:${c.route.name ?? '?'}:${c.outcome}`);
}

describe('ComposedRouter.explain', () => {
  it('reports the action, the deciding tier and the winning route', () => {
    const winner: SignalRoute = { kind: UserMessage, name: 'agent-continue', action: Action.Continue };
    const router = new ComposedRouter({
      agent: [winner],
      plugin: [{ kind: UserMessage, name: 'plugin-stop', action: Action.GracefulStop }],
    });

    const decision = router.explain(signal(UserMessage, 'hello'));

    expect(decision.action).toBe(Action.Continue);
    expect(decision.tier).toBe('agent');
    expect(decision.route).toBe(winner);
  });

  it('lists every route of the kind in evaluation order (tier, then priority, then registration) with its outcome', () => {
    const router = new ComposedRouter({
      strategy: [
        { kind: UserMessage, name: 's-low', action: Action.reject('a'), priority: -1, predicate: () => false },
        { kind: UserMessage, name: 's-high', action: Action.reject('b'), priority: 5, predicate: () => false },
      ],
      agent: [
        { kind: UserMessage, name: 'a-catch-all', action: Action.Continue, priority: 1 },
        { kind: Stop, name: 'a-stop', action: Action.ForceStop },
        {
          kind: UserMessage,
          name: 'a-winner',
          action: Action.transition('command-mode'),
          priority: 10,
          predicate: () => true,
        },
        { kind: UserMessage, name: 'a-false', action: Action.custom('x'), priority: 5, predicate: () => false },
        { kind: UserMessage, name: 'a-tie', action: Action.custom('y'), priority: 10 },
      ],
      plugin: [
        { kind: UserMessage, name: 'p-high', action: Action.GracefulStop, priority: 100 },
        { kind: Timer, name: 'p-timer', action: Action.transition('check') },
      ],
    });

    const decision = router.explain(signal(UserMessage, '/cmd'));

    expect(decision.action).toEqual(Action.transition('command-mode'));
    expect(decision.tier).toBe('agent');
    expect(decision.route?.name).toBe('a-winner');
    expect(outcomes(decision)).toEqual([
      'strategy:s-high:predicate_false',
      'strategy:s-low:predicate_false',
      'agent:a-winner:matched',
      'agent:a-tie:outranked',
      'agent:a-false:predicate_false',
      'agent:a-catch-all:outranked',
      'plugin:p-high:shadowed_by_higher_tier',
    ]);
  });

  it('each considered entry carries the route object as registered', () => {
    const route: SignalRoute = { kind: UserMessage, action: Action.Continue };
    const router = new ComposedRouter({ plugin: [route] });

    const [entry] = router.explain(signal(UserMessage)).considered;

    expect(entry?.route).toBe(route);
    expect(entry?.tier).toBe('plugin');
  });

  it('routes at equal priority appear in registration order, the first matched and the rest outranked', () => {
    const router = new ComposedRouter({
      strategy: [
        { kind: Stop, name: 'first', action: Action.ForceStop },
        { kind: Stop, name: 'second', action: Action.GracefulStop },
        { kind: Stop, name: 'third', action: Action.custom('x') },
      ],
    });

    expect(outcomes(router.explain(signal(Stop)))).toEqual([
      'strategy:first:matched',
      'strategy:second:outranked',
      'strategy:third:outranked',
    ]);
  });

  it('does not evaluate the predicates of a lower tier than the deciding one', () => {
    const shadowed = vi.fn(() => true);
    const router = new ComposedRouter({
      strategy: [{ kind: UserMessage, action: Action.reject('busy') }],
      agent: [{ kind: UserMessage, name: 'agent', action: Action.Continue, predicate: shadowed }],
      plugin: [{ kind: UserMessage, name: 'plugin', action: Action.GracefulStop, predicate: shadowed }],
    });

    const decision = router.explain(signal(UserMessage));

    expect(shadowed).not.toHaveBeenCalled();
    expect(decision.considered.map((c) => c.outcome)).toEqual([
      'matched',
      'shadowed_by_higher_tier',
      'shadowed_by_higher_tier',
    ]);
  });

  it('a signal of a kind with no routes is unrouted with nothing considered', () => {
    const router = new ComposedRouter({
      strategy: [{ kind: Stop, action: Action.ForceStop }],
      agent: [{ kind: UserMessage, action: Action.Continue }],
    });

    expect(router.explain(signal(SignalKind.custom('unknown')))).toEqual({
      action: undefined,
      tier: undefined,
      route: undefined,
      considered: [],
    });
  });

  it('an empty router explains every signal as unrouted with nothing considered', () => {
    const decision = new ComposedRouter().explain(signal(UserMessage, 'hello'));

    expect(decision).toEqual({ action: undefined, tier: undefined, route: undefined, considered: [] });
  });

  it('an unrouted signal lists every route of its kind as predicate_false', () => {
    const router = new ComposedRouter({
      strategy: [{ kind: UserMessage, name: 's', action: Action.reject('busy'), predicate: () => false }],
      agent: [
        { kind: UserMessage, name: 'a1', action: Action.Continue, predicate: (s) => s.payload === 'a' },
        {
          kind: UserMessage,
          name: 'a2',
          action: Action.Continue,
          priority: 3,
          predicate: () => 1 as unknown as boolean,
        },
      ],
      plugin: [{ kind: UserMessage, name: 'p', action: Action.GracefulStop, predicate: () => false }],
    });

    const decision = router.explain(signal(UserMessage, 'b'));

    expect(decision.action).toBeUndefined();
    expect(decision.tier).toBeUndefined();
    expect(decision.route).toBeUndefined();
    expect(outcomes(decision)).toEqual([
      'strategy:s:predicate_false',
      'agent:a2:predicate_false',
      'agent:a1:predicate_false',
      'plugin:p:predicate_false',
    ]);
  });

  it('explain().action is what route() returns, for routed and unrouted signals', () => {
    const router = new ComposedRouter({
      strategy: [{ kind: UserMessage, action: Action.reject('busy'), predicate: (s) => s.payload === 'busy' }],
      agent: [
        { kind: UserMessage, action: Action.GracefulStop, priority: 1, predicate: (s) => s.payload === '' },
        { kind: UserMessage, action: Action.Continue },
      ],
      plugin: [{ kind: Timer, action: Action.transition('check') }],
    });

    for (const s of [
      signal(UserMessage, 'busy'),
      signal(UserMessage, ''),
      signal(UserMessage, 'hi'),
      signal(Timer),
      signal(Stop),
    ]) {
      expect(router.explain(s).action).toBe(router.route(s));
    }
  });

  it('passes the RouteContext to every predicate it evaluates', () => {
    const seen: RouteContext[] = [];
    const record = (result: boolean) => (_s: Signal, ctx: RouteContext) => {
      seen.push(ctx);
      return result;
    };
    const router = new ComposedRouter({
      strategy: [{ kind: UserMessage, action: Action.reject('busy'), predicate: record(false) }],
      agent: [
        { kind: UserMessage, action: Action.Continue, priority: 1, predicate: record(true) },
        { kind: UserMessage, action: Action.GracefulStop, predicate: record(true) },
      ],
    });
    const ctx: RouteContext = { sessionKey: 'agent:support:peer:7', agentId: 'support' };

    router.explain(signal(UserMessage), ctx);

    expect(seen).toHaveLength(3);
    for (const c of seen) expect(c).toBe(ctx);
  });

  it('passes an empty context to predicates when called without one', () => {
    const predicate = vi.fn((_s: Signal, _ctx: RouteContext) => true);
    const router = new ComposedRouter({ agent: [{ kind: UserMessage, action: Action.Continue, predicate }] });

    router.explain(signal(UserMessage));

    expect(predicate).toHaveBeenCalledTimes(1);
    expect(predicate.mock.calls[0]?.[1]).toEqual({});
  });

  describe('predicates that throw', () => {
    it('throws RoutePredicateError when a predicate evaluated before any match throws, and never reports a lower tier', () => {
      const cause = new Error('state unavailable');
      const router = new ComposedRouter({
        strategy: [
          {
            kind: UserMessage,
            name: 'fsm-gate',
            action: Action.reject('busy'),
            predicate: () => {
              throw cause;
            },
          },
        ],
        agent: [{ kind: UserMessage, action: Action.Continue }],
      });

      const error = catchError(() => router.explain(signal(UserMessage)), RoutePredicateError);

      expect(error.code).toBe('ROUTE_PREDICATE_FAILED');
      expect(error.tier).toBe('strategy');
      expect(error.routeName).toBe('fsm-gate');
      expect(error.cause).toBe(cause);
    });

    it('throws when a predicate ranked above the winner in the same tier throws', () => {
      const router = new ComposedRouter({
        agent: [
          { kind: UserMessage, action: Action.Continue },
          {
            kind: UserMessage,
            name: 'boom',
            action: Action.GracefulStop,
            priority: 1,
            predicate: () => {
              throw new Error('boom');
            },
          },
        ],
      });

      expect(catchError(() => router.explain(signal(UserMessage)), RoutePredicateError).routeName).toBe('boom');
      expect(catchError(() => router.route(signal(UserMessage)), RoutePredicateError).routeName).toBe('boom');
    });

    it('a throwing predicate ranked below the winner is reported on its entry, not thrown, and route() is unaffected', () => {
      const cause = new Error('late crash');
      const late = vi.fn(() => {
        throw cause;
      });
      const router = new ComposedRouter({
        agent: [
          { kind: UserMessage, name: 'winner', action: Action.Continue, priority: 2 },
          { kind: UserMessage, name: 'late', action: Action.GracefulStop, priority: 1, predicate: late },
        ],
      });

      expect(router.route(signal(UserMessage))).toBe(Action.Continue);
      expect(late).not.toHaveBeenCalled();

      const decision = router.explain(signal(UserMessage));

      expect(decision.action).toBe(Action.Continue);
      expect(decision.considered).toHaveLength(2);
      expect(decision.considered[0]).toMatchObject({ outcome: 'matched' });
      expect(decision.considered[0]).not.toHaveProperty('error');
      expect(decision.considered[1]).toMatchObject({ tier: 'agent', outcome: 'outranked', error: cause });
    });
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'user_message'],
  ])('explain(%s) throws SignalyardError ROUTE_SIGNAL_INVALID', (_label, value) => {
    const router = new ComposedRouter({ agent: [{ kind: UserMessage, action: Action.Continue }] });

    const error = catchError(() => router.explain(value as unknown as Signal), SignalyardError);

    expect(error.code).toBe('ROUTE_SIGNAL_INVALID');
  });
});

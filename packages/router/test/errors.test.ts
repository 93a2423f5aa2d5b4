import { describe, expect, it, vi } from 'vitest';
import {
  AbortedError,
  Action,
  ConfigError,
  SignalKind,
  SignalyardError,
  signal,
  type Signal,
  type SignalRoute,
} from '@signalyard/core';
import {
  ComposedRouter,
  RouteConfigError,
  RoutePredicateError,
  RouterArgumentError,
  type Tier,
} from '@signalyard/router';
import { TIERS, catchError, malformed } from './support.js';

const { UserMessage, Timer } = SignalKind;

function throwing(error: unknown): () => boolean {
  return () => {
    throw error;
  };
}

describe('a predicate that throws', () => {
  it('in the strategy tier makes route() throw RoutePredicateError with tier, routeName and cause', () => {
    const cause = new Error('fsm state unreadable');
    const gate: SignalRoute = {
      kind: UserMessage,
      name: 'mid-transaction',
      action: Action.reject('busy'),
      predicate: throwing(cause),
    };
    const router = new ComposedRouter({ strategy: [gate], agent: [{ kind: UserMessage, action: Action.Continue }] });

    const error = catchError(() => router.route(signal(UserMessage, 'hi')), RoutePredicateError);

    expect(error.code).toBe('ROUTE_PREDICATE_FAILED');
    expect(error.tier).toBe('strategy');
    expect(error.routeName).toBe('mid-transaction');
    expect(error.route).toBe(gate);
    expect(error.cause).toBe(cause);
    expect(error.name).toBe('RoutePredicateError');
    expect(error).toBeInstanceOf(SignalyardError);
  });

  it('never falls through to a permissive lower tier', () => {
    const agentPredicate = vi.fn(() => true);
    const router = new ComposedRouter({
      strategy: [{ kind: UserMessage, action: Action.reject('busy'), predicate: throwing(new Error('crash')) }],
      agent: [{ kind: UserMessage, action: Action.Continue, priority: 100, predicate: agentPredicate }],
      plugin: [{ kind: UserMessage, action: Action.Continue }],
    });

    expect(() => router.route(signal(UserMessage))).toThrow(RoutePredicateError);
    expect(agentPredicate).not.toHaveBeenCalled();
  });

  it.each(TIERS)('in the %s tier names that tier', (tier) => {
    const router = new ComposedRouter({
      [tier]: [
        { kind: UserMessage, name: `${tier}-route`, action: Action.GracefulStop, predicate: throwing(new Error('x')) },
      ],
    });

    const error = catchError(() => router.route(signal(UserMessage)), RoutePredicateError);

    expect(error.tier).toBe(tier);
    expect(error.routeName).toBe(`${tier}-route`);
    expect(error.message).toContain(`${tier}-tier route "${tier}-route"`);
  });

  it('in the agent tier never falls through to the plugin tier', () => {
    const router = new ComposedRouter({
      agent: [{ kind: UserMessage, action: Action.Continue, predicate: throwing(new Error('crash')) }],
      plugin: [{ kind: UserMessage, action: Action.GracefulStop }],
    });

    expect(catchError(() => router.route(signal(UserMessage)), RoutePredicateError).tier).toBe('agent');
  });

  it('on an unnamed route is named kind#index, the index in its own tier', () => {
    const router = new ComposedRouter({
      agent: [{ kind: Timer, action: Action.transition('check') }],
      plugin: [
        { kind: Timer, action: Action.transition('check') },
        { kind: UserMessage, action: Action.Continue, predicate: () => false },
        { kind: UserMessage, action: Action.GracefulStop, priority: 5, predicate: throwing(new Error('x')) },
      ],
    });

    const error = catchError(() => router.route(signal(UserMessage)), RoutePredicateError);

    expect(error.tier).toBe('plugin');
    expect(error.routeName).toBe('user_message#2');
    expect(error.message).toContain('"user_message#2"');
  });

  it('on a route named "" is named kind#index', () => {
    const router = new ComposedRouter({
      strategy: [
        { kind: SignalKind.custom('probe'), name: '', action: Action.Continue, predicate: throwing(new Error('x')) },
      ],
    });

    expect(catchError(() => router.route(signal(SignalKind.custom('probe'))), RoutePredicateError).routeName).toBe(
      'custom:probe#0',
    );
  });

  it("has a message naming the tier, the route and the thrown error's message", () => {
    const router = new ComposedRouter({
      strategy: [
        {
          kind: UserMessage,
          name: 'quota',
          action: Action.reject('quota'),
          predicate: throwing(new TypeError('counter is undefined')),
        },
      ],
    });

    const error = catchError(() => router.route(signal(UserMessage)), RoutePredicateError);

    expect(error.message).toBe('The predicate of strategy-tier route "quota" threw: counter is undefined');
  });

  it.each([
    ['a string', 'plain string', 'plain string'],
    ['a number', 42, '42'],
    ['null', null, 'null'],
  ])('that throws %s still gives RoutePredicateError carrying the value as cause', (_label, thrown, shown) => {
    const router = new ComposedRouter({
      strategy: [{ kind: UserMessage, name: 'gate', action: Action.reject('busy'), predicate: throwing(thrown) }],
    });

    const error = catchError(() => router.route(signal(UserMessage)), RoutePredicateError);

    expect(error.cause).toBe(thrown);
    expect(error.message).toContain(shown);
  });

  it('that throws a plain object still gives RoutePredicateError carrying the object as cause', () => {
    const thrown = { reason: 'quota store offline' };
    const router = new ComposedRouter({
      plugin: [{ kind: UserMessage, name: 'quota', action: Action.reject('quota'), predicate: throwing(thrown) }],
    });

    const error = catchError(() => router.route(signal(UserMessage)), RoutePredicateError);

    expect(error.cause).toBe(thrown);
    expect(error.tier).toBe('plugin');
    expect(error.routeName).toBe('quota');
  });

  // BUG (fails until fixed): route-predicate-error.ts line 20 builds the message with
  // `String(options.cause)`, which itself throws a TypeError for an object that cannot be
  // converted to a string (no prototype, or a throwing toString). route() then throws that
  // TypeError instead of RoutePredicateError, losing the tier, the route name and the cause.
  it.each([
    ['an object without a prototype', () => Object.create(null) as object],
    [
      'an object whose toString throws',
      () => ({
        toString: () => {
          throw new Error('no');
        },
      }),
    ],
  ])('that throws %s still gives RoutePredicateError carrying the value as cause', (_label, make) => {
    const thrown = make();
    const router = new ComposedRouter({
      strategy: [{ kind: UserMessage, name: 'gate', action: Action.reject('busy'), predicate: throwing(thrown) }],
    });

    const error = catchError(() => router.route(signal(UserMessage)), RoutePredicateError);

    expect(error.cause).toBe(thrown);
    expect(error.routeName).toBe('gate');
  });

  it('ranked below the winner of its tier is not evaluated by route()', () => {
    const late = vi.fn(throwing(new Error('never reached')));
    const router = new ComposedRouter({
      agent: [
        { kind: UserMessage, action: Action.Continue, priority: 1 },
        { kind: UserMessage, action: Action.GracefulStop, priority: 0, predicate: late },
      ],
    });

    expect(router.route(signal(UserMessage))).toBe(Action.Continue);
    expect(late).not.toHaveBeenCalled();
  });

  it('in a lower tier is not evaluated when a higher tier decides', () => {
    const router = new ComposedRouter({
      strategy: [{ kind: UserMessage, action: Action.reject('busy') }],
      plugin: [{ kind: UserMessage, action: Action.Continue, predicate: throwing(new Error('never reached')) }],
    });

    expect(router.route(signal(UserMessage))).toEqual(Action.reject('busy'));
  });
});

describe('isInstance', () => {
  const routeConfigError = catchError(() => new ComposedRouter({ agent: [malformed(null)] }), RouteConfigError);
  const routePredicateError = catchError(
    () =>
      new ComposedRouter({
        agent: [{ kind: UserMessage, action: Action.Continue, predicate: throwing(new Error('x')) }],
      }).route(signal(UserMessage)),
    RoutePredicateError,
  );
  const others: readonly (readonly [string, unknown])[] = [
    ['a plain SignalyardError', new SignalyardError({ code: 'ROUTE_INVALID', message: 'same code, base class' })],
    ['a ConfigError', new ConfigError({ problems: [{ path: 'x', message: 'y' }] })],
    ['an AbortedError', new AbortedError({ message: 'stopped' })],
    ['a plain Error', new Error('x')],
    ['an object with the same code', { code: 'ROUTE_PREDICATE_FAILED', name: 'RoutePredicateError' }],
    ['null', null],
    ['undefined', undefined],
    ['a string', 'RouteConfigError'],
  ];

  it('RouteConfigError.isInstance matches a RouteConfigError and nothing else', () => {
    expect(RouteConfigError.isInstance(routeConfigError)).toBe(true);
    expect(RouteConfigError.isInstance(routePredicateError)).toBe(false);
    for (const [, other] of others) expect(RouteConfigError.isInstance(other)).toBe(false);
  });

  it('RoutePredicateError.isInstance matches a RoutePredicateError and nothing else', () => {
    expect(RoutePredicateError.isInstance(routePredicateError)).toBe(true);
    expect(RoutePredicateError.isInstance(routeConfigError)).toBe(false);
    for (const [, other] of others) expect(RoutePredicateError.isInstance(other)).toBe(false);
  });

  const routerArgumentError = catchError(() => new ComposedRouter().routes('plugins' as Tier), RouterArgumentError);

  it('RouterArgumentError.isInstance matches a RouterArgumentError and nothing else', () => {
    expect(RouterArgumentError.isInstance(routerArgumentError)).toBe(true);
    expect(RouterArgumentError.isInstance(routeConfigError)).toBe(false);
    expect(RouterArgumentError.isInstance(routePredicateError)).toBe(false);
    expect(RouteConfigError.isInstance(routerArgumentError)).toBe(false);
    expect(RoutePredicateError.isInstance(routerArgumentError)).toBe(false);
    for (const [, other] of others) expect(RouterArgumentError.isInstance(other)).toBe(false);
    expect(RouterArgumentError.isInstance({ code: 'ROUTE_TIER_INVALID', name: 'RouterArgumentError' })).toBe(false);
    const foreign = Object.assign(new Error('x'), { [Symbol.for('signalyard.error.RouterArgumentError')]: true });
    expect(RouterArgumentError.isInstance(foreign)).toBe(true);
    expect(RouteConfigError.isInstance(foreign)).toBe(false);
  });

  it('both router errors are SignalyardErrors but not ConfigErrors', () => {
    expect(SignalyardError.isInstance(routeConfigError)).toBe(true);
    expect(SignalyardError.isInstance(routePredicateError)).toBe(true);
    expect(ConfigError.isInstance(routeConfigError)).toBe(false);
    expect(routeConfigError.code).toBe('ROUTE_INVALID');
    expect(routePredicateError.code).toBe('ROUTE_PREDICATE_FAILED');
  });

  it('recognises an error from another installed copy of the router by its Symbol.for marker', () => {
    const foreignConfig = Object.assign(new Error('x'), { [Symbol.for('signalyard.error.RouteConfigError')]: true });
    const foreignPredicate = Object.assign(new Error('x'), {
      [Symbol.for('signalyard.error.RoutePredicateError')]: true,
    });

    expect(RouteConfigError.isInstance(foreignConfig)).toBe(true);
    expect(RoutePredicateError.isInstance(foreignConfig)).toBe(false);
    expect(RoutePredicateError.isInstance(foreignPredicate)).toBe(true);
    expect(RouteConfigError.isInstance(foreignPredicate)).toBe(false);
  });
});

describe('routes that are not an object: RouteConfigError, the one owner of ROUTE_INVALID', () => {
  it.each([
    ['null', null, 'null'],
    ['a string', 'agent', '"agent"'],
    ['a number', 3, '3'],
  ])('routes given as %s: code ROUTE_INVALID, no route problem, the value named', (_label, value, shown) => {
    const error = catchError(
      () => new ComposedRouter(value as unknown as ConstructorParameters<typeof ComposedRouter>[0]),
      RouteConfigError,
    );

    expect(error.code).toBe('ROUTE_INVALID');
    expect(error.name).toBe('RouteConfigError');
    expect(error.problems).toEqual([]);
    expect(error.tier).toBeUndefined();
    expect(error.message).toBe(`Invalid router routes ${shown}: expected an object { strategy?, agent?, plugin? }`);
    expect(RouterArgumentError.isInstance(error)).toBe(false);
    expect(SignalyardError.isInstance(error)).toBe(true);
  });
});

describe('RouterArgumentError: an argument the router cannot take', () => {
  it('an unknown tier name: code ROUTE_TIER_INVALID naming it', () => {
    const error = catchError(() => new ComposedRouter().routes('Strategy' as Tier), RouterArgumentError);

    expect(error.code).toBe('ROUTE_TIER_INVALID');
    expect(error.value).toBe('Strategy');
    expect(error.message).toContain('"Strategy"');
  });

  it('route() and explain() of something that is not a signal: code ROUTE_SIGNAL_INVALID', () => {
    const router = new ComposedRouter({ agent: [{ kind: UserMessage, action: Action.Continue }] });

    const routed = catchError(() => router.route('hi' as unknown as Signal), RouterArgumentError);
    const explained = catchError(() => router.explain(null as unknown as Signal), RouterArgumentError);

    expect(routed.code).toBe('ROUTE_SIGNAL_INVALID');
    expect(routed.value).toBe('hi');
    expect(explained.code).toBe('ROUTE_SIGNAL_INVALID');
    expect(explained.value).toBe(null);
  });

  it('a malformed route inside valid routes is still a RouteConfigError, not an argument error', () => {
    const error = catchError(() => new ComposedRouter({ agent: [malformed(null)] }), RouteConfigError);

    expect(RouterArgumentError.isInstance(error)).toBe(false);
    expect(error.code).toBe('ROUTE_INVALID');
  });
});

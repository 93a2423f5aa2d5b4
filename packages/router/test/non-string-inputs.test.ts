// Every public function of @signalyard/router that takes a string parameter (or a string field
// of an object it takes: a signal's kind, a route's kind and name, a plugin's name), given each
// kind of non-string: a typed SignalyardError with its code, never a TypeError.
import { describe, expect, it } from 'vitest';
import { Action, SignalKind, isSignalyardError, signal, type Plugin, type SignalRoute } from '@signalyard/core';
import { ComposedRouter } from '@signalyard/router';
import { NON_STRINGS, expectCode, failure } from '@signalyard/test-utils';

type Call = (bad: never) => unknown;

const stop: SignalRoute = { kind: SignalKind.Stop, action: Action.GracefulStop };
const router = new ComposedRouter({ agent: [stop, { kind: SignalKind.UserMessage, action: Action.Continue }] });
const plugin = (name: unknown, routes: readonly unknown[]): Plugin =>
  ({ name, signalRoutes: () => routes }) as unknown as Plugin;

/** [function, call with the bad value, expected code, the parameter is optional (undefined is valid)]. */
const THROWING: readonly (readonly [string, Call, string, boolean?])[] = [
  ['ComposedRouter#routes(tier)', (bad) => router.routes(bad), 'ROUTE_TIER_INVALID'],
  ['ComposedRouter#route({ kind })', (bad) => router.route({ kind: bad, payload: null }), 'ROUTE_SIGNAL_INVALID'],
  ['ComposedRouter#match({ kind })', (bad) => router.match({ kind: bad, payload: null }), 'ROUTE_SIGNAL_INVALID'],
  ['ComposedRouter#explain({ kind })', (bad) => router.explain({ kind: bad, payload: null }), 'ROUTE_SIGNAL_INVALID'],
  [
    'new ComposedRouter({ routes[].kind })',
    (bad) => new ComposedRouter({ agent: [{ ...stop, kind: bad }] }),
    'ROUTE_INVALID',
  ],
  [
    'new ComposedRouter({ routes[].name })',
    (bad) => new ComposedRouter({ plugin: [{ ...stop, name: bad }] }),
    'ROUTE_INVALID',
    true,
  ],
  [
    'new ComposedRouter({ routes[].action.target })',
    (bad) => new ComposedRouter({ strategy: [{ ...stop, action: { type: 'transition', target: bad } }] }),
    'ROUTE_INVALID',
  ],
  [
    'ComposedRouter.compose({ plugins[].name })',
    (bad) => ComposedRouter.compose({ plugins: [plugin(bad, [stop])] }),
    'ROUTE_INVALID',
  ],
  [
    'ComposedRouter.compose({ plugins[].name }) with a malformed route',
    (bad) => ComposedRouter.compose({ plugins: [plugin(bad, [{ ...stop, kind: 'nope' }])] }),
    'ROUTE_INVALID',
  ],
  [
    'ComposedRouter.compose({ plugins[].name }) whose signalRoutes() is not a list',
    (bad) => ComposedRouter.compose({ plugins: [{ name: bad, signalRoutes: () => 'x' } as unknown as Plugin] }),
    'ROUTE_INVALID',
  ],
];

describe.each(NON_STRINGS)('router, given %s where a string is expected', (_label, bad: unknown) => {
  const rows = THROWING.filter(([, , , optional]) => !(optional === true && bad === undefined)).map(
    ([name, call, code]) => ({ name, call, code }),
  );
  it.each(rows)('$name fails with a SignalyardError and its code', async ({ call, code }) => {
    const error = await failure(() => call(bad as never));
    expect(isSignalyardError(error)).toBe(true);
    expectCode(error, code);
  });
});

it('a well-formed signal still routes, and an unknown string kind is still unrouted', () => {
  expect(router.route(signal(SignalKind.Stop))).toBe(Action.GracefulStop);
  expect(router.route(signal(SignalKind.custom('x')))).toBeUndefined();
});

import { Action, SignalKind, signal, type SignalRoute } from '@signalyard/core';
import { ComposedRouter, RoutePredicateError } from '@signalyard/router';
import { describe, expect, it } from 'vitest';

describe('ComposedRouter.match', () => {
  const gate: SignalRoute = {
    kind: SignalKind.UserMessage,
    name: 'gate',
    predicate: (s) => s.payload === 'blocked',
    action: Action.reject('blocked'),
  };
  const chat: SignalRoute = { kind: SignalKind.UserMessage, name: 'chat', action: Action.Continue };
  const tick: SignalRoute = { kind: SignalKind.Timer, name: 'tick', action: Action.custom('tick') };
  const router = new ComposedRouter({ strategy: [gate], agent: [chat], plugin: [tick] });

  it('returns the winning route with its tier and action, the route as registered', () => {
    const m = router.match(signal(SignalKind.UserMessage, 'blocked'));
    expect(m).toEqual({ action: gate.action, tier: 'strategy', route: gate });
    expect(m?.route).toBe(gate);
    expect(router.match(signal(SignalKind.UserMessage, 'hi'))?.route).toBe(chat);
    expect(router.match(signal(SignalKind.Timer))).toMatchObject({ tier: 'plugin', route: tick });
  });

  it('returns undefined when unrouted', () => {
    expect(router.match(signal(SignalKind.ToolResult, {}))).toBeUndefined();
  });

  it('returns the same frozen object for the same route every time (no allocation)', () => {
    const a = router.match(signal(SignalKind.UserMessage, 'a'));
    const b = router.match(signal(SignalKind.UserMessage, 'b'));
    expect(a).toBe(b);
    expect(Object.isFrozen(a)).toBe(true);
  });

  it('agrees with route() and explain()', () => {
    for (const payload of ['blocked', 'hi', '']) {
      const s = signal(SignalKind.UserMessage, payload);
      expect(router.match(s)?.action).toBe(router.route(s));
      expect(router.match(s)?.route).toBe(router.explain(s).route);
      expect(router.match(s)?.tier).toBe(router.explain(s).tier);
    }
  });

  it('passes the context to predicates and throws RoutePredicateError for a throwing predicate', () => {
    const seen: unknown[] = [];
    const r = new ComposedRouter({
      agent: [
        {
          kind: SignalKind.Timer,
          name: 'boom',
          predicate: (_s, ctx) => {
            seen.push(ctx);
            throw new Error('boom');
          },
          action: Action.Continue,
        },
      ],
    });
    expect(() => r.match(signal(SignalKind.Timer), { sessionKey: 'k', agentId: 'a' })).toThrow(RoutePredicateError);
    expect(seen).toEqual([{ sessionKey: 'k', agentId: 'a' }]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  Action,
  DirectStrategy,
  SignalKind,
  signal,
  type ExecutionStrategy,
  type Plugin,
  type SignalRoute,
  type StrategySnapshot,
  type TransitionResult,
} from '@signalyard/core';
import { ComposedRouter, RouteConfigError } from '@signalyard/router';
import { catchError, malformed } from './support.js';

const { UserMessage, Stop, Timer } = SignalKind;

/**
 * A strategy that gates user messages while it is mid-transaction, the way an FSM strategy
 * expresses state-dependent routing inside a predicate. Counts `signalRoutes()` calls.
 */
class GateStrategy implements ExecutionStrategy {
  busy = false;
  signalRoutesCalls = 0;
  readonly #routes: readonly SignalRoute[];

  constructor(extra: readonly SignalRoute[] = []) {
    this.#routes = [
      {
        kind: UserMessage,
        name: 'mid-transaction',
        action: Action.reject('mid_transaction'),
        predicate: () => this.busy,
      },
      ...extra,
    ];
  }

  execute(action: string): TransitionResult {
    return { from: 'gate', action, to: 'gate' };
  }

  canExecute(): boolean {
    return true;
  }

  signalRoutes(): readonly SignalRoute[] {
    this.signalRoutesCalls++;
    return this.#routes;
  }

  snapshot(): StrategySnapshot {
    return { type: 'gate', busy: this.busy };
  }

  restore(): void {}
}

/** A plugin whose `signalRoutes()` returns `routes` and counts its calls. */
function countingPlugin(name: string, routes: readonly SignalRoute[]): Plugin & { calls: number } {
  return {
    name,
    calls: 0,
    signalRoutes() {
      this.calls++;
      return routes;
    },
  };
}

describe('ComposedRouter.compose', () => {
  it('reads strategy.signalRoutes() exactly once, however often the router is used', () => {
    const strategy = new GateStrategy();
    const router = ComposedRouter.compose({ strategy, agent: [{ kind: UserMessage, action: Action.Continue }] });

    router.route(signal(UserMessage, 'a'));
    router.route(signal(UserMessage, 'b'));
    router.explain(signal(UserMessage, 'c'));
    router.routes('strategy');

    expect(strategy.signalRoutesCalls).toBe(1);
  });

  it("puts the strategy's routes in the strategy tier, where priority 0 beats an agent route at priority 100", () => {
    const strategy = new GateStrategy([{ kind: Stop, action: Action.ForceStop }]);
    const router = ComposedRouter.compose({
      strategy,
      agent: [
        { kind: Stop, action: Action.GracefulStop, priority: 100 },
        { kind: UserMessage, action: Action.Continue, priority: 100 },
      ],
    });

    expect(router.routes('strategy')).toEqual(strategy.signalRoutes());
    expect(router.route(signal(Stop))).toBe(Action.ForceStop);
  });

  it("a strategy's state-dependent predicate vetoes the agent's routing while it holds, without recomposing", () => {
    const strategy = new GateStrategy();
    const router = ComposedRouter.compose({
      strategy,
      agent: [{ kind: UserMessage, action: Action.Continue, priority: 100 }],
      plugins: [
        { name: 'fallback', signalRoutes: () => [{ kind: UserMessage, action: Action.GracefulStop, priority: 1000 }] },
      ],
    });

    expect(router.route(signal(UserMessage, 'hi'))).toBe(Action.Continue);
    strategy.busy = true;
    expect(router.route(signal(UserMessage, 'hi'))).toEqual(Action.reject('mid_transaction'));
    strategy.busy = false;
    expect(router.route(signal(UserMessage, 'hi'))).toBe(Action.Continue);
    expect(strategy.signalRoutesCalls).toBe(1);
  });

  it("puts the agent's routes in the agent tier, in order", () => {
    const agent: SignalRoute[] = [
      { kind: UserMessage, action: Action.Continue },
      { kind: Timer, action: Action.transition('check') },
    ];
    const router = ComposedRouter.compose({ agent });

    expect(router.routes('agent')).toEqual(agent);
    expect(router.routes('strategy')).toEqual([]);
    expect(router.routes('plugin')).toEqual([]);
  });

  it('concatenates plugin routes into the plugin tier in plugin order', () => {
    const a1: SignalRoute = { kind: UserMessage, action: Action.custom('a1') };
    const a2: SignalRoute = { kind: Stop, action: Action.custom('a2') };
    const b1: SignalRoute = { kind: UserMessage, action: Action.custom('b1') };
    const router = ComposedRouter.compose({
      plugins: [
        { name: 'a', signalRoutes: () => [a1, a2] },
        { name: 'b', signalRoutes: () => [b1] },
      ],
    });

    const plugin = router.routes('plugin');
    expect(plugin).toHaveLength(3);
    expect(plugin[0]).toBe(a1);
    expect(plugin[1]).toBe(a2);
    expect(plugin[2]).toBe(b1);
  });

  it("at equal priority, an earlier plugin's route beats a later plugin's", () => {
    const make = (first: string, second: string) =>
      ComposedRouter.compose({
        plugins: [
          { name: first, signalRoutes: () => [{ kind: UserMessage, action: Action.custom(first), priority: 3 }] },
          { name: second, signalRoutes: () => [{ kind: UserMessage, action: Action.custom(second), priority: 3 }] },
        ],
      });

    expect(make('a', 'b').route(signal(UserMessage))).toEqual(Action.custom('a'));
    expect(make('b', 'a').route(signal(UserMessage))).toEqual(Action.custom('b'));
  });

  it("a later plugin's higher-priority route beats an earlier plugin's", () => {
    const router = ComposedRouter.compose({
      plugins: [
        { name: 'a', signalRoutes: () => [{ kind: UserMessage, action: Action.custom('a'), priority: 1 }] },
        { name: 'b', signalRoutes: () => [{ kind: UserMessage, action: Action.custom('b'), priority: 2 }] },
      ],
    });

    expect(router.route(signal(UserMessage))).toEqual(Action.custom('b'));
  });

  it("reads each plugin's signalRoutes() exactly once", () => {
    const a = countingPlugin('a', [{ kind: UserMessage, action: Action.Continue }]);
    const b = countingPlugin('b', []);
    const router = ComposedRouter.compose({ plugins: [a, b] });

    router.route(signal(UserMessage));
    router.explain(signal(UserMessage));

    expect(a.calls).toBe(1);
    expect(b.calls).toBe(1);
  });

  it('accepts plugins without signalRoutes, which contribute no routes', () => {
    const router = ComposedRouter.compose({
      plugins: [
        { name: 'observer' },
        { name: 'limits', signalRoutes: () => [{ kind: UserMessage, action: Action.GracefulStop }] },
        { name: 'logger', setup: () => undefined },
      ],
    });

    expect(router.routes('plugin')).toHaveLength(1);
    expect(router.route(signal(UserMessage))).toBe(Action.GracefulStop);
  });

  it("the agent's routes override a plugin's defaults", () => {
    const router = ComposedRouter.compose({
      agent: [{ kind: UserMessage, action: Action.Continue }],
      plugins: [
        { name: 'rate-limit', signalRoutes: () => [{ kind: UserMessage, action: Action.GracefulStop, priority: 99 }] },
      ],
    });

    expect(router.route(signal(UserMessage))).toBe(Action.Continue);
  });

  it('a DirectStrategy contributes no routes', () => {
    const router = ComposedRouter.compose({
      strategy: new DirectStrategy(),
      agent: [{ kind: UserMessage, action: Action.Continue }],
    });

    expect(router.routes('strategy')).toEqual([]);
    expect(router.route(signal(UserMessage))).toBe(Action.Continue);
  });

  it.each([
    ['no argument', () => ComposedRouter.compose()],
    ['{}', () => ComposedRouter.compose({})],
    ['empty parts', () => ComposedRouter.compose({ strategy: new DirectStrategy(), agent: [], plugins: [] })],
  ])('composing %s gives an empty router', (_label, make) => {
    const router = make();

    expect(router.routes('strategy')).toEqual([]);
    expect(router.routes('agent')).toEqual([]);
    expect(router.routes('plugin')).toEqual([]);
    expect(router.route(signal(UserMessage))).toBeUndefined();
  });

  it('the composed router does not see routes added to the arrays it was composed from', () => {
    const agent: SignalRoute[] = [];
    const pluginRoutes: SignalRoute[] = [];
    const router = ComposedRouter.compose({ agent, plugins: [{ name: 'p', signalRoutes: () => pluginRoutes }] });

    agent.push({ kind: UserMessage, action: Action.Continue });
    pluginRoutes.push({ kind: UserMessage, action: Action.GracefulStop });

    expect(router.route(signal(UserMessage))).toBeUndefined();
  });

  describe('malformed routes', () => {
    it('a malformed plugin route throws RouteConfigError whose message names the plugin', () => {
      const error = catchError(
        () =>
          ComposedRouter.compose({
            plugins: [
              { name: 'good', signalRoutes: () => [{ kind: UserMessage, action: Action.Continue }] },
              { name: 'rate-limit', signalRoutes: () => [malformed({ kind: 'message', action: Action.GracefulStop })] },
            ],
          }),
        RouteConfigError,
      );

      expect(error.code).toBe('ROUTE_INVALID');
      expect(error.tier).toBe('plugin');
      expect(error.index).toBe(1);
      expect(error.message).toContain('plugin "rate-limit"');
      expect(error.message).toContain('"message"');
      expect(error.problems).toEqual([
        { tier: 'plugin', index: 1, message: expect.stringContaining('plugin "rate-limit"') },
      ]);
    });

    it('malformed routes of several plugins are all reported, each naming its own plugin', () => {
      const error = catchError(
        () =>
          ComposedRouter.compose({
            plugins: [
              {
                name: 'alpha',
                signalRoutes: () => [malformed({ kind: UserMessage, action: Action.Continue, priority: 0.5 })],
              },
              {
                name: 'beta',
                signalRoutes: () => [{ kind: Stop, action: Action.ForceStop }, malformed({ kind: Stop })],
              },
            ],
          }),
        RouteConfigError,
      );

      expect(error.problems).toHaveLength(2);
      expect(error.problems[0]).toMatchObject({ tier: 'plugin', index: 0 });
      expect(error.problems[0]?.message).toContain('plugin "alpha"');
      expect(error.problems[0]?.message).not.toContain('beta');
      expect(error.problems[1]).toMatchObject({ tier: 'plugin', index: 2 });
      expect(error.problems[1]?.message).toContain('plugin "beta"');
      expect(error.problems[1]?.message).not.toContain('alpha');
    });

    it('a plugin whose signalRoutes() does not return an array throws RouteConfigError naming the plugin', () => {
      const error = catchError(
        () =>
          ComposedRouter.compose({
            plugins: [
              { name: 'broken', signalRoutes: () => ({ kind: UserMessage }) as unknown as readonly SignalRoute[] },
            ],
          }),
        RouteConfigError,
      );

      expect(error.code).toBe('ROUTE_INVALID');
      expect(error.tier).toBe('plugin');
      expect(error.message).toContain('plugin "broken"');
    });

    it('a malformed strategy route throws RouteConfigError in the strategy tier', () => {
      const strategy = new GateStrategy([malformed({ kind: Timer, action: { type: 'transition' } })]);

      const error = catchError(() => ComposedRouter.compose({ strategy }), RouteConfigError);

      expect(error.problems).toEqual([{ tier: 'strategy', index: 1, message: expect.stringContaining('target') }]);
    });

    it('a malformed agent route throws RouteConfigError in the agent tier', () => {
      const error = catchError(
        () => ComposedRouter.compose({ agent: [{ kind: UserMessage, action: Action.Continue }, malformed(null)] }),
        RouteConfigError,
      );

      expect(error.problems).toEqual([{ tier: 'agent', index: 1, message: expect.stringContaining('route object') }]);
    });
  });
});

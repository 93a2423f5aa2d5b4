import { describe, expect, it } from 'vitest';
import {
  Action,
  DirectStrategy,
  MemoryCheckpointStore,
  SignalKind,
  signal,
  transitionRefusal,
  type ExecutionStrategy,
  type RouteContext,
} from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import { createRunner } from 'signalyard';
import { FINISH, START, echoEngine, phaseFsm, phaseRoutes, stored, user } from './support.js';

const A = 'agent:main:a';
const B = 'agent:main:b';

describe('one strategy instance per session', () => {
  it('two sessions of one FSM agent keep independent states: a transition in one never gates the other', async () => {
    const definition = phaseFsm();
    const store = new MemoryCheckpointStore();
    const { engine, seen } = echoEngine();
    const runner = createRunner({
      store,
      agents: [{ id: 'main', strategy: () => definition.create(), routes: [...phaseRoutes], engine }],
    });

    expect(await runner.dispatch(A, signal(START))).toMatchObject({
      status: 'completed',
      output: { from: 'idle', action: 'start', to: 'busy' },
    });
    // A is busy: its user messages are gated by the state-scoped strategy route ...
    const gated = await runner.dispatch(A, signal(SignalKind.UserMessage, 'to a'));
    expect(gated).toMatchObject({
      status: 'rejected',
      action: { type: 'reject', reason: 'busy' },
      decidedBy: { tier: 'strategy' },
    });
    expect(gated.decidedBy?.route.name).toBe('busy-gate');
    // ... B is not.
    const free = await runner.dispatch(B, signal(SignalKind.UserMessage, 'to b'));
    expect(free).toMatchObject({ status: 'completed', output: 'echo: to b', decidedBy: undefined });
    expect(seen.map((c) => c.sessionKey)).toEqual([B]);

    expect((await stored(store, A)).data.strategy).toEqual({ type: 'fsm', current_state: 'busy' });
    expect((await stored(store, B)).data.strategy).toEqual({ type: 'fsm', current_state: 'idle' });

    // Moving B does not move A back, and A finishing does not touch B.
    await runner.dispatch(B, signal(START));
    await runner.dispatch(A, signal(FINISH));
    expect((await runner.session(A))?.strategy).toEqual({ type: 'fsm', current_state: 'idle' });
    expect((await runner.session(B))?.strategy).toEqual({ type: 'fsm', current_state: 'busy' });
    expect((await runner.dispatch(A, signal(SignalKind.UserMessage, 'a again'))).status).toBe('completed');
    expect((await runner.dispatch(B, signal(SignalKind.UserMessage, 'b again'))).status).toBe('rejected');
    await runner.close();
  });

  it('calls the strategy factory once per session and keeps the instance while the session is live', async () => {
    let made = 0;
    const definition = phaseFsm();
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          strategy: () => {
            made++;
            return definition.create();
          },
          routes: [...phaseRoutes],
          engine: echoEngine().engine,
        },
      ],
    });
    for (const key of [A, B, A, B, A]) await runner.dispatch(key, signal(SignalKind.UserMessage, 'x'));
    await runner.dispatch(A, signal(START));
    expect(made).toBe(2);
    await runner.close();
  });

  it('the engine sees the session strategy in ctx.strategy, in its current state', async () => {
    const states: unknown[] = [];
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          strategy: () => FsmStrategy.builder().initial('idle').transition('idle', 'start', 'busy').define().create(),
          routes: [
            { kind: START, action: Action.transition('start') },
            { kind: SignalKind.custom('ask'), action: Action.Continue },
          ],
          engine: async (ctx) => {
            states.push(ctx.strategy.snapshot(), ctx.strategy.canExecute('start'));
            return {};
          },
        },
      ],
    });
    await runner.dispatch(A, signal(SignalKind.custom('ask')));
    await runner.dispatch(A, signal(START));
    await runner.dispatch(A, signal(SignalKind.custom('ask')));
    expect(states).toEqual([
      { type: 'fsm', current_state: 'idle' },
      true,
      { type: 'fsm', current_state: 'busy' },
      false,
    ]);
    await runner.close();
  });

  it('without a strategy factory an agent gets a DirectStrategy', async () => {
    const store = new MemoryCheckpointStore();
    let strategy: ExecutionStrategy | undefined;
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.custom('go'), action: Action.transition('anything') }],
          engine: async (ctx) => {
            strategy = ctx.strategy;
            return {};
          },
        },
      ],
    });
    await runner.dispatch(A, signal(SignalKind.UserMessage, 'hi'));
    expect(strategy).toBeInstanceOf(DirectStrategy);
    const moved = await runner.dispatch(A, signal(SignalKind.custom('go')));
    expect(moved).toMatchObject({ status: 'completed', output: { from: 'direct', action: 'anything', to: 'direct' } });
    expect((await stored(store, A)).data.strategy).toEqual({ type: 'direct' });
    await runner.close();
  });

  it('route predicates receive { sessionKey, agentId } of the session', async () => {
    const contexts: RouteContext[] = [];
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [
            {
              kind: SignalKind.UserMessage,
              action: Action.reject('vip only'),
              predicate: (_s, ctx) => {
                contexts.push(ctx);
                return ctx.sessionKey !== 'agent:main:vip';
              },
            },
          ],
          engine: echoEngine().engine,
        },
      ],
    });
    expect((await runner.dispatch('agent:main:guest', signal(SignalKind.UserMessage, 'hi'))).status).toBe('rejected');
    expect((await runner.dispatch('agent:main:vip', signal(SignalKind.UserMessage, 'hi'))).status).toBe('completed');
    expect(contexts).toEqual([
      { sessionKey: 'agent:main:guest', agentId: 'main' },
      { sessionKey: 'agent:main:vip', agentId: 'main' },
    ]);
    await runner.close();
  });

  it('a strategy route beats an agent route, which beats a plugin route', async () => {
    const kind = SignalKind.custom('who');
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          strategy: () =>
            FsmStrategy.builder()
              .initial('s')
              .route({ kind, action: Action.reject('strategy') }, { inStates: ['s'] })
              .define()
              .create(),
          routes: [{ kind, action: Action.reject('agent') }],
          engine: echoEngine().engine,
        },
        { id: 'plain', routes: [{ kind, action: Action.reject('agent') }], engine: echoEngine().engine },
        { id: 'bare', engine: echoEngine().engine },
      ],
      plugins: [{ name: 'p', signalRoutes: () => [{ kind, action: Action.reject('plugin') }] }],
    });
    expect(await runner.dispatch('agent:main:x', signal(kind))).toMatchObject({
      action: { reason: 'strategy' },
      decidedBy: { tier: 'strategy' },
    });
    expect(await runner.dispatch('agent:plain:x', signal(kind))).toMatchObject({
      action: { reason: 'agent' },
      decidedBy: { tier: 'agent' },
    });
    expect(await runner.dispatch('agent:bare:x', signal(kind))).toMatchObject({
      action: { reason: 'plugin' },
      decidedBy: { tier: 'plugin' },
    });
    await runner.close();
  });
});

describe('strategy and routing failures are outcomes', () => {
  it('a strategy factory that throws fails the signal and the runner goes on serving other agents', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'broken',
          strategy: () => {
            throw new Error('no FSM today');
          },
          engine: echoEngine().engine,
        },
        { id: 'main', engine: echoEngine().engine },
      ],
    });
    const outcome = await runner.dispatch('agent:broken:main', signal(SignalKind.UserMessage, 'hi'));
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('STRATEGY_FACTORY_FAILED');
    expect(outcome.error?.cause).toBeInstanceOf(Error);
    expect((await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'hi'))).status).toBe('completed');
    await runner.close();
  });

  it('a strategy factory that returns something else than an ExecutionStrategy fails the signal', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          strategy: () => ({ execute: () => undefined }) as unknown as ExecutionStrategy,
          engine: echoEngine().engine,
        },
      ],
    });
    const outcome = await runner.dispatch(A, signal(SignalKind.UserMessage, 'hi'));
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('STRATEGY_FACTORY_FAILED');
    await runner.close();
  });

  it('a route predicate that throws fails the signal with ROUTE_PREDICATE_FAILED, the user message is still saved', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          routes: [
            {
              kind: SignalKind.UserMessage,
              action: Action.Continue,
              predicate: () => {
                throw new Error('predicate bug');
              },
            },
          ],
          engine: echoEngine().engine,
        },
      ],
    });
    const outcome = await runner.dispatch(A, signal(SignalKind.UserMessage, 'hi'));
    expect(outcome).toMatchObject({ status: 'failed', action: undefined, decidedBy: undefined });
    expect(outcome.error?.code).toBe('ROUTE_PREDICATE_FAILED');
    expect((await stored(store, A)).data.history).toEqual([user('hi')]);
    await runner.close();
  });

  it('a state-scoped strategy route for stop only applies in its states', async () => {
    const definition = FsmStrategy.builder()
      .initial('idle')
      .transition('idle', 'start', 'busy')
      .route({ kind: SignalKind.Stop, action: Action.ForceStop }, { inStates: ['busy'] })
      .define();
    const runner = createRunner({
      agents: [
        { id: 'main', strategy: () => definition.create(), routes: [phaseRoutes[0]], engine: echoEngine().engine },
      ],
    });
    // idle: no strategy route for stop → the runner default graceful_stop.
    expect(await runner.dispatch(A, signal(SignalKind.Stop))).toMatchObject({
      status: 'completed',
      action: Action.GracefulStop,
      decidedBy: undefined,
    });
    await runner.dispatch(A, signal(START));
    expect(await runner.dispatch(A, signal(SignalKind.Stop))).toMatchObject({
      status: 'completed',
      action: Action.ForceStop,
      decidedBy: { tier: 'strategy' },
    });
    await runner.close();
  });
});

describe('refused transitions of a custom strategy', () => {
  it('an error carrying the core refusal marker is rejected; any other error is failed', async () => {
    class NotNow extends Error {
      readonly [transitionRefusal] = true;
    }
    const strategy = (): ExecutionStrategy => {
      const direct = new DirectStrategy();
      return Object.assign(Object.create(direct) as ExecutionStrategy, {
        execute: (target: string) => {
          if (target === 'later') throw new NotNow('not now');
          throw new Error('broken');
        },
      });
    };
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          strategy,
          routes: [{ kind: SignalKind.Timer, action: Action.transition('later') }],
          engine: async () => ({ actions: [Action.transition('other')] }),
        },
      ],
    });
    const refused = await runner.dispatch(A, signal(SignalKind.Timer, {}));
    expect(refused.status).toBe('rejected');
    expect(refused.error).toBeInstanceOf(Error);
    const failed = await runner.dispatch(A, signal(SignalKind.UserMessage, 'hi'));
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ code: 'ENGINE_FAILED', message: 'broken' });
    await runner.close();
  });
});

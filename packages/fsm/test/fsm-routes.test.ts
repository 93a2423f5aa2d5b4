import { describe, expect, it } from 'vitest';
import { Action, SignalKind, signal, type RouteContext, type Signal, type SignalRoute } from '@signalyard/core';
import { ComposedRouter } from '@signalyard/router';
import { FsmStrategy, type FsmDefinition } from '@signalyard/fsm';

const { UserMessage, Stop, Timer } = SignalKind;
const hello = signal(UserMessage, 'hello');

/** The agent tier every test composes under the FSM: user messages run the engine. */
const agentRoutes: readonly SignalRoute[] = [
  { kind: UserMessage, action: Action.Continue, priority: 100, name: 'agent-chat' },
];

/** idle --start--> processing --finish--> idle, gating user messages while processing. */
function gatedDefinition(): FsmDefinition {
  return FsmStrategy.builder()
    .initial('idle')
    .transition('idle', 'start', 'processing')
    .transition('processing', 'finish', 'idle')
    .route({ kind: UserMessage, action: Action.reject('busy'), name: 'busy-gate' }, { inStates: ['processing'] })
    .define();
}

describe('strategy-tier routes through a real ComposedRouter', () => {
  it('a user message is rejected as busy while processing, and falls through to the agent tier in other states', () => {
    const fsm = gatedDefinition().create();
    const router = ComposedRouter.compose({ strategy: fsm, agent: agentRoutes });

    expect(router.route(hello)).toEqual(Action.Continue);
    expect(router.explain(hello).tier).toBe('agent');

    fsm.execute('start');
    expect(router.route(hello)).toEqual(Action.reject('busy'));
    const decision = router.explain(hello);
    expect(decision.tier).toBe('strategy');
    expect(decision.route?.name).toBe('busy-gate');

    fsm.execute('finish');
    expect(router.route(hello)).toEqual(Action.Continue);
  });

  it('the gate beats an agent route of higher priority while it matches', () => {
    const fsm = gatedDefinition().create();
    const router = ComposedRouter.compose({
      strategy: fsm,
      agent: [{ kind: UserMessage, action: Action.ForceStop, priority: 1000 }],
    });
    fsm.execute('start');
    expect(router.route(hello)).toEqual(Action.reject('busy'));
  });

  it('the gate applies only to its own kind', () => {
    const fsm = gatedDefinition().create();
    const router = ComposedRouter.compose({ strategy: fsm, agent: [{ kind: Stop, action: Action.GracefulStop }] });
    fsm.execute('start');
    expect(router.route(signal(Stop))).toEqual(Action.GracefulStop);
    expect(router.route(signal(Timer))).toBeUndefined();
  });

  it('an FsmStrategy made with new FsmStrategy(definition) is itself the strategy a router composes', () => {
    const fsm = new FsmStrategy(gatedDefinition());
    const router = ComposedRouter.compose({ strategy: fsm, agent: agentRoutes });
    expect(router.route(hello)).toEqual(Action.Continue);
    fsm.execute('start');
    expect(router.route(hello)).toEqual(Action.reject('busy'));
    expect(fsm.signalRoutes()).toBe(fsm.signalRoutes());
  });

  it('two instances of one definition gate independently', () => {
    const definition = gatedDefinition();
    const processing = definition.create();
    const idle = definition.create();
    const processingRouter = ComposedRouter.compose({ strategy: processing, agent: agentRoutes });
    const idleRouter = ComposedRouter.compose({ strategy: idle, agent: agentRoutes });

    processing.execute('start');
    expect(processing.currentState).toBe('processing');
    expect(idle.currentState).toBe('idle');
    expect(processingRouter.route(hello)).toEqual(Action.reject('busy'));
    expect(idleRouter.route(hello)).toEqual(Action.Continue);

    idle.execute('start');
    processing.execute('finish');
    expect(processingRouter.route(hello)).toEqual(Action.Continue);
    expect(idleRouter.route(hello)).toEqual(Action.reject('busy'));
  });

  it('two instances from build() on one builder gate independently', () => {
    const builder = FsmStrategy.builder()
      .initial('idle')
      .transition('idle', 'start', 'processing')
      .route({ kind: UserMessage, action: Action.reject('busy') }, { inStates: ['processing'] });
    const a = builder.build();
    const b = builder.build();
    a.execute('start');
    expect(ComposedRouter.compose({ strategy: a, agent: agentRoutes }).route(hello)).toEqual(Action.reject('busy'));
    expect(ComposedRouter.compose({ strategy: b, agent: agentRoutes }).route(hello)).toEqual(Action.Continue);
  });

  it('a restored instance gates according to the restored state', () => {
    const definition = gatedDefinition();
    const fsm = definition.create({ type: 'fsm', current_state: 'processing' });
    const router = ComposedRouter.compose({ strategy: fsm, agent: agentRoutes });
    expect(router.route(hello)).toEqual(Action.reject('busy'));
    fsm.restore({ type: 'fsm', current_state: 'idle' });
    expect(router.route(hello)).toEqual(Action.Continue);
  });

  it('a route with its own predicate and inStates matches only when both hold', () => {
    const urgent = (s: Signal): boolean => s.payload === 'urgent';
    const fsm = FsmStrategy.builder()
      .initial('idle')
      .transition('idle', 'start', 'processing')
      .transition('processing', 'finish', 'idle')
      .route(
        { kind: UserMessage, action: Action.ForceStop, predicate: urgent, name: 'urgent-stop' },
        { inStates: ['processing'] },
      )
      .build();
    const router = ComposedRouter.compose({ strategy: fsm, agent: agentRoutes });
    const urgentMessage = signal(UserMessage, 'urgent');

    // idle: the state does not hold
    expect(router.route(urgentMessage)).toEqual(Action.Continue);
    expect(router.route(hello)).toEqual(Action.Continue);
    fsm.execute('start');
    // processing: only the predicate decides
    expect(router.route(urgentMessage)).toEqual(Action.ForceStop);
    expect(router.route(hello)).toEqual(Action.Continue);
  });

  it('the own predicate of a gated route receives the signal and the route context', () => {
    const seen: [Signal, RouteContext][] = [];
    const fsm = FsmStrategy.builder()
      .initial('a')
      .route(
        {
          kind: UserMessage,
          action: Action.Continue,
          predicate: (s, ctx) => {
            seen.push([s, ctx]);
            return true;
          },
        },
        { inStates: ['a'] },
      )
      .build();
    const ctx = { sessionKey: 'session-1', agentId: 'main' };
    expect(ComposedRouter.compose({ strategy: fsm }).route(hello, ctx)).toEqual(Action.Continue);
    expect(seen).toEqual([[hello, ctx]]);
  });

  it('the own predicate of a gated route is not called outside its states', () => {
    let calls = 0;
    const fsm = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'go', 'b')
      .route({ kind: UserMessage, action: Action.Continue, predicate: () => ++calls > 0 }, { inStates: ['b'] })
      .build();
    expect(ComposedRouter.compose({ strategy: fsm }).route(hello)).toBeUndefined();
    expect(calls).toBe(0);
  });

  it('a gated route whose own predicate returns a truthy non-true value does not match', () => {
    const fsm = FsmStrategy.builder()
      .initial('a')
      .route(
        { kind: UserMessage, action: Action.reject('no'), predicate: () => 1 as unknown as boolean },
        { inStates: ['a'] },
      )
      .build();
    expect(ComposedRouter.compose({ strategy: fsm, agent: agentRoutes }).route(hello)).toEqual(Action.Continue);
  });

  it('a route without inStates matches in every state', () => {
    const fsm = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'go', 'b')
      .transition('b', 'go', 'c')
      .route({ kind: Stop, action: Action.GracefulStop, name: 'always-stop' })
      .build();
    const router = ComposedRouter.compose({ strategy: fsm, agent: [{ kind: Stop, action: Action.ForceStop }] });
    for (const state of ['a', 'b', 'c']) {
      expect(fsm.currentState).toBe(state);
      expect(router.route(signal(Stop))).toEqual(Action.GracefulStop);
      if (state !== 'c') fsm.execute('go');
    }
  });

  it('a route with several inStates matches in each of them and in no other', () => {
    const fsm = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'go', 'b')
      .transition('b', 'go', 'c')
      .transition('c', 'go', 'a')
      .route({ kind: UserMessage, action: Action.reject('later') }, { inStates: ['b', 'c'] })
      .build();
    const router = ComposedRouter.compose({ strategy: fsm, agent: agentRoutes });
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const action = router.route(hello);
      seen.push(`${fsm.currentState}:${action?.type ?? 'none'}`);
      fsm.execute('go');
    }
    expect(seen).toEqual(['a:continue', 'b:reject', 'c:reject']);
  });

  it('routes keep their names, kinds, actions and priorities, in registration order', () => {
    const fsm = FsmStrategy.builder()
      .initial('a')
      .route({ kind: UserMessage, action: Action.reject('busy'), name: 'gate', priority: 3 }, { inStates: ['a'] })
      .route({ kind: Stop, action: Action.GracefulStop, name: 'stopper' })
      .route({ kind: Timer, action: Action.transition('tick') })
      .build();
    const routes = fsm.signalRoutes();
    expect(routes.map((r) => r.name)).toEqual(['gate', 'stopper', undefined]);
    expect(routes.map((r) => r.kind)).toEqual([UserMessage, Stop, Timer]);
    expect(routes.map((r) => r.action)).toEqual([
      Action.reject('busy'),
      Action.GracefulStop,
      Action.transition('tick'),
    ]);
    expect(routes[0]?.priority).toBe(3);
    const router = ComposedRouter.compose({ strategy: fsm });
    expect(router.routes('strategy').map((r) => r.name)).toEqual(['gate', 'stopper', undefined]);
    expect(router.explain(signal(Stop)).route?.name).toBe('stopper');
  });

  it('within the strategy tier, route priority decides between FSM routes', () => {
    const fsm = FsmStrategy.builder()
      .initial('a')
      .route({ kind: UserMessage, action: Action.Continue, name: 'low' })
      .route({ kind: UserMessage, action: Action.reject('high'), name: 'high', priority: 5 }, { inStates: ['a'] })
      .build();
    expect(ComposedRouter.compose({ strategy: fsm }).route(hello)).toEqual(Action.reject('high'));
  });

  it('signalRoutes() is the same array on every call, and empty without routes', () => {
    const fsm = gatedDefinition().create();
    expect(fsm.signalRoutes()).toBe(fsm.signalRoutes());
    expect(fsm.signalRoutes()).toHaveLength(1);
    expect(FsmStrategy.builder().initial('a').build().signalRoutes()).toEqual([]);
  });

  it('each instance has its own routes bound to its own state', () => {
    const definition = gatedDefinition();
    const a = definition.create();
    const b = definition.create();
    b.execute('start');
    const gateA = a.signalRoutes()[0]!;
    const gateB = b.signalRoutes()[0]!;
    expect(gateA.predicate?.(hello, {})).toBe(false);
    expect(gateB.predicate?.(hello, {})).toBe(true);
  });

  it('a Transition action from the router is an FSM action name that the runner executes', () => {
    const fsm = FsmStrategy.builder()
      .initial('waiting')
      .transition('waiting', 'check', 'checking')
      .route({ kind: Timer, action: Action.transition('check') }, { inStates: ['waiting'] })
      .build();
    const action = ComposedRouter.compose({ strategy: fsm }).route(signal(Timer, { at: 1 }));
    expect(action).toEqual(Action.transition('check'));
    if (action?.type !== 'transition') return expect.unreachable('expected a transition action');
    expect(fsm.execute(action.target, { at: 1 })).toEqual({ from: 'waiting', action: 'check', to: 'checking' });
  });
});

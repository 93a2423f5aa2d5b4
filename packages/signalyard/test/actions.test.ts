import { describe, expect, it } from 'vitest';
import {
  Action,
  MemoryCheckpointStore,
  SignalKind,
  SignalyardError,
  signal,
  type CustomActionHandler,
  type Plugin,
  type SignalRoute,
} from '@signalyard/core';
import { ClosureGuard, FsmStrategy, type FsmDefinition } from '@signalyard/fsm';
import { createRunner, type AgentDefinition, type EngineFn, type TurnResult } from 'signalyard';
import { MAIN, START, assistant, echoEngine, phaseFsm, phaseRoutes, recordEvents, stored, user } from './support.js';

const CHECK = SignalKind.custom('check');
const BOOM = SignalKind.custom('boom');

/** idle --check [score > 0.5]--> approved; idle --boom [guard throws]--> idle. */
function reviewFsm(): FsmDefinition {
  return FsmStrategy.builder()
    .initial('idle')
    .transition('idle', 'check', 'approved', {
      guard: new ClosureGuard('good-enough', (input) => (input as { score: number }).score > 0.5),
    })
    .transition('idle', 'boom', 'idle', {
      guard: new ClosureGuard('broken', () => {
        throw new Error('guard bug');
      }),
    })
    .define();
}

function reviewAgent(engine: EngineFn = echoEngine().engine, extraRoutes: SignalRoute[] = []): AgentDefinition {
  const definition = reviewFsm();
  return {
    id: 'main',
    strategy: () => definition.create(),
    routes: [
      { kind: CHECK, action: Action.transition('check'), name: 'check' },
      { kind: BOOM, action: Action.transition('boom') },
      ...extraRoutes,
    ],
    engine,
  };
}

describe('continue', () => {
  it('runs the engine and returns its output; decidedBy names the route', async () => {
    const route: SignalRoute = { kind: SignalKind.UserMessage, action: Action.Continue, name: 'chat' };
    const runner = createRunner({
      agents: [
        { id: 'main', routes: [route], engine: async (ctx) => ({ output: { said: ctx.history.at(-1)?.content } }) },
      ],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome).toEqual({
      sessionKey: MAIN,
      agentId: 'main',
      action: Action.Continue,
      decidedBy: { tier: 'agent', route },
      status: 'completed',
      output: { said: 'hi' },
    });
    await runner.close();
  });

  it('an unrouted user_message gets the runner default continue, with decidedBy undefined', async () => {
    const { engine, seen } = echoEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine }] });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome).toMatchObject({
      status: 'completed',
      action: Action.Continue,
      decidedBy: undefined,
      output: 'echo: hi',
    });
    expect(seen).toHaveLength(1);
    await runner.close();
  });

  it('a turn that reports status paused gives a paused outcome, and its effects are saved', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        { id: 'main', engine: async () => ({ status: 'paused', state: { waitingFor: 'approval' }, output: 'paused' }) },
      ],
    });
    expect(await runner.handle({ channel: 'cli', text: 'hi' })).toMatchObject({ status: 'paused', output: 'paused' });
    expect((await stored(store, MAIN)).data.engine).toEqual({ waitingFor: 'approval' });
    await runner.close();
  });

  it('an engine that returns undefined is a turn that did nothing', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: (async () => undefined) as unknown as EngineFn }] });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome.status).toBe('completed');
    expect('output' in outcome).toBe(false);
    await runner.close();
  });

  it.each([
    { what: 'a number', result: 42 },
    { what: 'an array', result: [] },
    { what: 'messages that are not a list', result: { messages: 'hi' } },
    { what: 'a message without a role', result: { messages: [{ content: 'hi' }] } },
    { what: 'a message with an unknown role', result: { messages: [{ role: 'robot', content: 'hi' }] } },
    { what: 'a message whose content is not a string', result: { messages: [{ role: 'assistant', content: 1 }] } },
    { what: 'an unknown status', result: { status: 'done' } },
    { what: 'actions that are not a list', result: { actions: Action.Continue } },
    { what: 'an action that is not an Action', result: { actions: [{ type: 'teleport' }] } },
  ])(
    'an engine that returns $what fails with TURN_RESULT_INVALID and nothing from the turn is saved',
    async ({ result }) => {
      const store = new MemoryCheckpointStore();
      const runner = createRunner({
        store,
        agents: [{ id: 'main', engine: (async () => result) as unknown as EngineFn }],
      });
      const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
      expect(outcome.status).toBe('failed');
      expect(outcome.error?.code).toBe('TURN_RESULT_INVALID');
      expect((await stored(store, MAIN)).data.history).toEqual([user('hi')]);
      await runner.close();
    },
  );
});

describe('engine failures', () => {
  it('a plain Error becomes ENGINE_FAILED with the error as cause; the last good checkpoint is kept and the runner goes on', async () => {
    const store = new MemoryCheckpointStore();
    const bug = new Error('model down');
    let fail = false;
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            if (fail) throw bug;
            return {
              messages: [assistant(`re: ${ctx.history.at(-1)?.content ?? ''}`)],
              state: { good: ctx.history.length },
            };
          },
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'one' });
    const good = await stored(store, MAIN);
    fail = true;
    const outcome = await runner.handle({ channel: 'cli', text: 'two' });
    expect(outcome).toMatchObject({ status: 'failed', action: Action.Continue });
    expect(outcome.error?.code).toBe('ENGINE_FAILED');
    expect(outcome.error?.cause).toBe(bug);
    const after = await stored(store, MAIN);
    expect(after.data.engine).toEqual(good.data.engine);
    expect(after.data.history).toEqual([...good.data.history, user('two')]);
    fail = false;
    expect((await runner.handle({ channel: 'cli', text: 'three' })).status).toBe('completed');
    expect((await stored(store, MAIN)).data.engine).toEqual({ good: 4 });
    await runner.close();
  });

  it('a SignalyardError keeps its own code', async () => {
    const error = new SignalyardError({ code: 'MODEL_RATE_LIMITED', message: 'slow down' });
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async () => {
            throw error;
          },
        },
      ],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toBe(error);
    await runner.close();
  });

  it('a thrown non-Error value is wrapped as ENGINE_FAILED too', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async () => {
            throw 'just a string';
          },
        },
      ],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome.error?.code).toBe('ENGINE_FAILED');
    expect(outcome.error?.cause).toBe('just a string');
    await runner.close();
  });
});

describe('transition(x) alone', () => {
  it('runs no engine turn and completes with the TransitionResult as output', async () => {
    const { engine, seen } = echoEngine();
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, agents: [reviewAgent(engine)] });
    const events = recordEvents(runner);
    const outcome = await runner.dispatch(MAIN, signal(CHECK, { score: 0.9 }));
    expect(outcome).toMatchObject({
      status: 'completed',
      action: Action.transition('check'),
      decidedBy: { tier: 'agent' },
      output: { from: 'idle', action: 'check', to: 'approved', guard: 'good-enough' },
    });
    expect(outcome.decidedBy?.route.name).toBe('check');
    expect(seen).toHaveLength(0);
    expect((await stored(store, MAIN)).data.strategy).toEqual({ type: 'fsm', current_state: 'approved' });
    expect(events.filter((e) => e.type === 'transition_applied')).toEqual([
      expect.objectContaining({
        type: 'transition_applied',
        sessionKey: MAIN,
        agentId: 'main',
        result: outcome.output,
      }),
    ]);
    expect(events.some((e) => e.type === 'turn_start')).toBe(false);
    await runner.close();
  });

  it('a transition the FSM does not have is rejected with FSM_INVALID_TRANSITION and the state is kept', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, agents: [reviewAgent()] });
    await runner.dispatch(MAIN, signal(CHECK, { score: 0.9 }));
    const version = (await stored(store, MAIN)).version;
    const outcome = await runner.dispatch(MAIN, signal(CHECK, { score: 0.9 }));
    expect(outcome).toMatchObject({ status: 'rejected', action: Action.transition('check') });
    expect(outcome.error?.code).toBe('FSM_INVALID_TRANSITION');
    expect(await stored(store, MAIN)).toMatchObject({ version, data: { strategy: { current_state: 'approved' } } });
    await runner.close();
  });

  it('a transition every guard refuses is rejected with FSM_GUARD_REJECTED and the state is kept', async () => {
    const runner = createRunner({ agents: [reviewAgent()] });
    const outcome = await runner.dispatch(MAIN, signal(CHECK, { score: 0.1 }));
    expect(outcome.status).toBe('rejected');
    expect(outcome.error?.code).toBe('FSM_GUARD_REJECTED');
    expect((await runner.session(MAIN))?.strategy).toEqual({ type: 'fsm', current_state: 'idle' });
    await runner.close();
  });

  it('a guard that throws fails the signal (FSM_GUARD_FAILED): something broke, not a refusal', async () => {
    const runner = createRunner({ agents: [reviewAgent()] });
    const outcome = await runner.dispatch(MAIN, signal(BOOM));
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('FSM_GUARD_FAILED');
    await runner.close();
  });

  it('a user_message routed to a refused transition still saves the user message', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [reviewAgent(undefined, [{ kind: SignalKind.UserMessage, action: Action.transition('nope') }])],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'hello' });
    expect(outcome.status).toBe('rejected');
    expect(outcome.error?.code).toBe('FSM_INVALID_TRANSITION');
    expect((await stored(store, MAIN)).data).toMatchObject({
      history: [user('hello')],
      strategy: { current_state: 'idle' },
    });
    await runner.close();
  });
});

describe('reject(reason)', () => {
  it('resolves rejected and runs nothing', async () => {
    const { engine, seen } = echoEngine();
    const route: SignalRoute = { kind: SignalKind.UserMessage, action: Action.reject('maintenance') };
    const runner = createRunner({
      agents: [{ id: 'main', strategy: () => phaseFsm().create(), routes: [route], engine }],
    });
    const events = recordEvents(runner);
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome).toEqual({
      sessionKey: MAIN,
      agentId: 'main',
      action: Action.reject('maintenance'),
      decidedBy: { tier: 'agent', route },
      status: 'rejected',
    });
    expect(seen).toHaveLength(0);
    expect(events.map((e) => e.type)).not.toContain('turn_start');
    expect((await runner.session(MAIN))?.strategy).toEqual({ type: 'fsm', current_state: 'idle' });
    await runner.close();
  });
});

describe('custom(name)', () => {
  function toolsPlugin(handlers: Record<string, CustomActionHandler>): Plugin {
    return {
      name: 'tools',
      setup(ctx) {
        for (const [name, handler] of Object.entries(handlers)) ctx.handleCustomAction(name, handler);
      },
    };
  }
  const LOOKUP = SignalKind.custom('lookup');

  it("resolves completed with the handler's return value as output; the handler gets the session, agent, signal and an abortSignal", async () => {
    const calls: unknown[] = [];
    const runner = createRunner({
      agents: [
        { id: 'main', routes: [{ kind: LOOKUP, action: Action.custom('lookup') }], engine: echoEngine().engine },
      ],
      plugins: [
        toolsPlugin({
          lookup: async (ctx) => {
            calls.push(ctx);
            return { found: ctx.signal.payload };
          },
        }),
      ],
    });
    const sig = signal(LOOKUP, 'order-7');
    const outcome = await runner.dispatch(MAIN, sig);
    expect(outcome).toMatchObject({
      status: 'completed',
      action: Action.custom('lookup'),
      output: { found: 'order-7' },
      decidedBy: { tier: 'agent' },
    });
    expect(calls).toEqual([{ sessionKey: MAIN, agentId: 'main', signal: sig, abortSignal: expect.any(AbortSignal) }]);
    await runner.close();
  });

  it('a synchronous handler works as well', async () => {
    const runner = createRunner({
      agents: [
        { id: 'main', routes: [{ kind: LOOKUP, action: Action.custom('lookup') }], engine: echoEngine().engine },
      ],
      plugins: [toolsPlugin({ lookup: () => 'sync' })],
    });
    expect(await runner.dispatch(MAIN, signal(LOOKUP))).toMatchObject({ status: 'completed', output: 'sync' });
    await runner.close();
  });

  it('a custom action no plugin handles fails with CUSTOM_ACTION_UNHANDLED', async () => {
    const runner = createRunner({
      agents: [
        { id: 'main', routes: [{ kind: LOOKUP, action: Action.custom('lookup') }], engine: echoEngine().engine },
      ],
    });
    const outcome = await runner.dispatch(MAIN, signal(LOOKUP));
    expect(outcome).toMatchObject({ status: 'failed', action: Action.custom('lookup') });
    expect(outcome.error?.code).toBe('CUSTOM_ACTION_UNHANDLED');
    await runner.close();
  });

  it('a handler that throws fails with CUSTOM_ACTION_FAILED and the thrown error as cause', async () => {
    const bug = new Error('kaboom');
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.UserMessage, action: Action.custom('lookup') }],
          engine: echoEngine().engine,
        },
      ],
      plugins: [
        toolsPlugin({
          lookup: () => {
            throw bug;
          },
        }),
      ],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'look it up' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('CUSTOM_ACTION_FAILED');
    expect(outcome.error?.cause).toBe(bug);
    expect((await stored(store, MAIN)).data.history).toEqual([user('look it up')]);
    await runner.close();
  });

  it('a handler that throws a SignalyardError keeps its code', async () => {
    const error = new SignalyardError({ code: 'LOOKUP_DENIED', message: 'no' });
    const runner = createRunner({
      agents: [
        { id: 'main', routes: [{ kind: LOOKUP, action: Action.custom('lookup') }], engine: echoEngine().engine },
      ],
      plugins: [
        toolsPlugin({
          lookup: async () => {
            throw error;
          },
        }),
      ],
    });
    expect((await runner.dispatch(MAIN, signal(LOOKUP))).error).toBe(error);
    await runner.close();
  });
});

describe('unrouted', () => {
  it('a non-user signal no route matches resolves unrouted, emits an unrouted event and saves nothing', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, agents: [{ id: 'main', engine: echoEngine().engine }] });
    await runner.handle({ channel: 'cli', text: 'hi' });
    const events = recordEvents(runner);
    const timer = signal(SignalKind.Timer, { at: 'noon' });
    const outcome = await runner.dispatch(MAIN, timer);
    expect(outcome).toEqual({
      sessionKey: MAIN,
      agentId: 'main',
      action: undefined,
      decidedBy: undefined,
      status: 'unrouted',
    });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'unrouted', sessionKey: MAIN, agentId: 'main', signal: timer }),
    );
    expect((await stored(store, MAIN)).version).toBe(1);
    await runner.close();
  });

  it('a stop with no route gets the runner default graceful_stop, with decidedBy undefined', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    expect(await runner.dispatch(MAIN, signal(SignalKind.Stop))).toMatchObject({
      status: 'completed',
      action: Action.GracefulStop,
      decidedBy: undefined,
    });
    await runner.close();
  });
});

describe('TurnResult.actions', () => {
  it('are applied in order after the turn: a transition moves the FSM and emits transition_applied', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          strategy: () => phaseFsm().create(),
          engine: async () => ({
            output: 'handed off',
            messages: [assistant('ok')],
            actions: [Action.transition('start')],
          }),
        },
      ],
    });
    const events = recordEvents(runner);
    const outcome = await runner.handle({ channel: 'cli', text: 'go' });
    expect(outcome).toMatchObject({ status: 'completed', action: Action.Continue, output: 'handed off' });
    expect((await stored(store, MAIN)).data).toMatchObject({
      strategy: { current_state: 'busy' },
      history: [user('go'), assistant('ok')],
    });
    const types = events.map((e) => e.type);
    expect(types.slice(types.indexOf('turn_end'))).toEqual(['turn_end', 'transition_applied', 'outcome']);
    expect(events.find((e) => e.type === 'transition_applied')).toMatchObject({
      result: { from: 'idle', action: 'start', to: 'busy' },
    });
    // The new state gates the next message.
    expect((await runner.handle({ channel: 'cli', text: 'again' })).status).toBe('rejected');
    await runner.close();
  });

  it('several transitions apply in order, each reported', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          strategy: () => phaseFsm().create(),
          engine: async () => ({
            actions: [Action.transition('start'), Action.transition('finish'), Action.transition('start')],
          }),
        },
      ],
    });
    const events = recordEvents(runner);
    await runner.handle({ channel: 'cli', text: 'go' });
    expect(events.flatMap((e) => (e.type === 'transition_applied' ? [`${e.result.from}>${e.result.to}`] : []))).toEqual(
      ['idle>busy', 'busy>idle', 'idle>busy'],
    );
    expect((await runner.session(MAIN))?.strategy).toEqual({ type: 'fsm', current_state: 'busy' });
    await runner.close();
  });

  it('are rolled back as a whole when one is refused: rejected, FSM unchanged, engine messages and state not saved, user message saved', async () => {
    const store = new MemoryCheckpointStore();
    let turn = 0;
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          strategy: () => phaseFsm().create(),
          routes: [phaseRoutes[1]],
          engine: async (): Promise<TurnResult> =>
            ++turn === 2
              ? {
                  messages: [assistant('second')],
                  state: { turn },
                  actions: [Action.transition('start'), Action.transition('start')],
                }
              : { messages: [assistant('first')], state: { turn } },
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'one' });
    const events = recordEvents(runner);
    const outcome = await runner.handle({ channel: 'cli', text: 'two' });
    expect(outcome).toMatchObject({ status: 'rejected', action: Action.Continue });
    expect(outcome.error?.code).toBe('FSM_INVALID_TRANSITION');
    const { data } = await stored(store, MAIN);
    expect(data.strategy).toEqual({ type: 'fsm', current_state: 'idle' });
    expect(data.history).toEqual([user('one'), assistant('first'), user('two')]);
    expect(data.engine).toEqual({ turn: 1 });
    expect(events.some((e) => e.type === 'transition_applied')).toBe(false);
    // The live strategy was rolled back too, not just the checkpoint.
    expect((await runner.handle({ channel: 'cli', text: 'three' })).status).toBe('completed');
    await runner.close();
  });

  it('a reject among them refuses the whole turn', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          strategy: () => phaseFsm().create(),
          engine: async () => ({
            messages: [assistant('x')],
            actions: [Action.transition('start'), Action.reject('second thoughts')],
          }),
        },
      ],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'go' });
    expect(outcome.status).toBe('rejected');
    expect((await stored(store, MAIN)).data).toMatchObject({
      strategy: { current_state: 'idle' },
      history: [user('go')],
    });
    await runner.close();
  });

  it('a custom action among them runs its handler; a failing one fails the turn and rolls back the transitions before it', async () => {
    const ran: string[] = [];
    const store = new MemoryCheckpointStore();
    let actions = [Action.custom('note')];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          strategy: () => phaseFsm().create(),
          engine: async () => ({ messages: [assistant('x')], actions }),
        },
      ],
      plugins: [
        {
          name: 'notes',
          setup(ctx) {
            ctx.handleCustomAction('note', () => {
              ran.push('note');
            });
            ctx.handleCustomAction('explode', () => {
              throw new Error('nope');
            });
          },
        },
      ],
    });
    expect((await runner.handle({ channel: 'cli', text: 'a' })).status).toBe('completed');
    expect(ran).toEqual(['note']);
    actions = [Action.transition('start'), Action.custom('explode')];
    const outcome = await runner.handle({ channel: 'cli', text: 'b' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('CUSTOM_ACTION_FAILED');
    expect((await stored(store, MAIN)).data).toMatchObject({
      strategy: { current_state: 'idle' },
      history: [user('a'), assistant('x'), user('b')],
    });
    await runner.close();
  });

  it('continue is not an action a turn can return: the turn fails with TURN_RESULT_INVALID', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: async () => ({ actions: [Action.Continue] }) }] });
    const outcome = await runner.handle({ channel: 'cli', text: 'go' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('TURN_RESULT_INVALID');
    await runner.close();
  });

  it('a continue after other actions: none of them runs (checked before the first is applied)', async () => {
    const ran: string[] = [];
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async () => ({ actions: [Action.custom('note'), Action.Continue] }),
        },
      ],
      plugins: [{ name: 'notes', setup: (ctx) => ctx.handleCustomAction('note', () => void ran.push('note')) }],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'go' });
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'TURN_RESULT_INVALID' } });
    expect(outcome.error?.message).toContain('actions[1]');
    expect(ran).toEqual([]);
    await runner.close();
  });
});

describe('decidedBy', () => {
  it('is { tier, route } for the deciding route of each tier', async () => {
    const agentRoute: SignalRoute = { kind: START, action: Action.transition('start'), name: 'agent-start' };
    const pluginRoute: SignalRoute = {
      kind: SignalKind.Timer,
      action: Action.reject('no timers'),
      name: 'plugin-timer',
    };
    const runner = createRunner({
      agents: [{ id: 'main', strategy: () => phaseFsm().create(), routes: [agentRoute], engine: echoEngine().engine }],
      plugins: [{ name: 'p', signalRoutes: () => [pluginRoute] }],
    });
    expect((await runner.dispatch(MAIN, signal(START))).decidedBy).toEqual({ tier: 'agent', route: agentRoute });
    expect((await runner.dispatch(MAIN, signal(SignalKind.Timer))).decidedBy).toEqual({
      tier: 'plugin',
      route: pluginRoute,
    });
    const gated = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'));
    expect(gated.decidedBy).toMatchObject({
      tier: 'strategy',
      route: { kind: SignalKind.UserMessage, name: 'busy-gate', action: Action.reject('busy') },
    });
    await runner.close();
  });
});

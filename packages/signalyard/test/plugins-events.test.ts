import { describe, expect, it } from 'vitest';
import {
  Action,
  ConfigError,
  SignalKind,
  signal,
  type Plugin,
  type PluginContext,
  type RunnerEvent,
  type SignalRoute,
  MemoryCheckpointStore,
} from '@signalyard/core';
import { createRunner, type Runner, type TurnContext, type TurnResult } from 'signalyard';
import { MAIN, deferred, echoEngine, heldEngine, phaseFsm, recordEvents, rejectionOf } from './support.js';
import { collect } from '@signalyard/test-utils';

/** A plugin that logs its lifecycle calls into `log`. */
function lifecycle(name: string, log: string[], extra: Partial<Plugin> = {}): Plugin {
  return {
    name,
    setup: () => {
      log.push(`setup ${name}`);
    },
    dispose: () => {
      log.push(`dispose ${name}`);
    },
    ...extra,
  };
}

describe('plugin lifecycle', () => {
  it('runs setup once at start() in plugin order and dispose once at close() in reverse order', async () => {
    const log: string[] = [];
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: ['a', 'b', 'c'].map((n) => lifecycle(n, log)),
    });
    await runner.start();
    expect(log).toEqual(['setup a', 'setup b', 'setup c']);
    await runner.start();
    await runner.handle({ channel: 'cli', text: 'hi' });
    expect(log).toEqual(['setup a', 'setup b', 'setup c']);
    await runner.close();
    await runner.close();
    expect(log).toEqual(['setup a', 'setup b', 'setup c', 'dispose c', 'dispose b', 'dispose a']);
  });

  it('start() is idempotent, also when called concurrently', async () => {
    const log: string[] = [];
    const gate = deferred();
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [
        lifecycle('slow', log, {
          setup: async () => {
            log.push('setup slow');
            await gate.promise;
          },
        }),
      ],
    });
    const starts = [runner.start(), runner.start(), runner.start()];
    gate.resolve();
    await Promise.all(starts);
    expect(log).toEqual(['setup slow']);
    await runner.close();
  });

  it('handle() and dispatch() start the runner when needed: setup finishes before the first turn', async () => {
    const log: string[] = [];
    const gate = deferred();
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async () => {
            log.push('turn');
            return {};
          },
        },
      ],
      plugins: [
        lifecycle('p', log, {
          setup: async () => {
            await gate.promise;
            log.push('setup p');
          },
        }),
      ],
    });
    const first = runner.handle({ channel: 'cli', text: 'hi' });
    const second = runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'again'));
    gate.resolve();
    await Promise.all([first, second]);
    expect(log).toEqual(['setup p', 'turn', 'turn']);
    await runner.close();
  });

  it('close() without start() neither sets up nor disposes plugins', async () => {
    const log: string[] = [];
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [lifecycle('p', log)],
    });
    await runner.close();
    expect(log).toEqual([]);
  });

  it('passes the runner logger to plugins as PluginContext.logger', async () => {
    const logger = { debug: () => undefined, warn: () => undefined };
    const contexts: PluginContext[] = [];
    const runner = createRunner({
      logger,
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [
        {
          name: 'p',
          setup: (ctx) => {
            contexts.push(ctx);
          },
        },
      ],
    });
    await runner.start();
    expect(contexts[0]?.logger).toBe(logger);
    await runner.close();
  });

  it('a plugin whose setup throws makes start() reject; the plugins set up before it are disposed once, in reverse', async () => {
    const log: string[] = [];
    const boom = new Error('setup failed');
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [
        lifecycle('a', log),
        lifecycle('b', log),
        lifecycle('c', log, {
          setup: () => {
            throw boom;
          },
        }),
      ],
    });
    expect(await rejectionOf(runner.start())).toBe(boom);
    expect(log).toEqual(['setup a', 'setup b', 'dispose b', 'dispose a']);
    // Signals cannot be served: they fail (an outcome, not a rejection).
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('RUNNER_START_FAILED');
    expect(outcome.error?.cause).toBe(boom);
    await runner.close();
    expect(log).toEqual(['setup a', 'setup b', 'dispose b', 'dispose a']);
  });

  it('disposes each plugin at most once when close() runs while a failing start() is still pending', async () => {
    // Fails until close() stops disposing plugins that start() already disposed (runner.ts #shutdown).
    const log: string[] = [];
    const gate = deferred();
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [
        lifecycle('a', log),
        lifecycle('b', log, {
          setup: async () => {
            log.push('setup b');
            await gate.promise;
            throw new Error('setup failed');
          },
        }),
      ],
    });
    const start = runner.start().catch(() => 'rejected');
    await Promise.resolve();
    const closed = runner.close();
    gate.resolve();
    expect(await start).toBe('rejected');
    await closed;
    expect(log.filter((l) => l === 'dispose a')).toHaveLength(1);
    expect(log).not.toContain('dispose b');
  });

  it('a dispose that throws is reported as a warning; the other plugins are still disposed', async () => {
    const log: string[] = [];
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [
        lifecycle('a', log),
        lifecycle('b', log, {
          dispose: () => {
            throw new Error('dispose failed');
          },
        }),
      ],
    });
    const events = recordEvents(runner);
    await runner.start();
    await runner.close();
    expect(log).toEqual(['setup a', 'setup b', 'dispose a']);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'warning', message: expect.stringContaining('"b"') }),
    );
  });
});

describe('plugin routes and custom actions', () => {
  const gate = (reason: string): SignalRoute => ({
    kind: SignalKind.UserMessage,
    action: Action.reject(reason),
    name: `gate-${reason}`,
  });

  it("plugins' signalRoutes() form the plugin tier, in plugin order", async () => {
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [
        { name: 'first', signalRoutes: () => [gate('first')] },
        { name: 'second', signalRoutes: () => [gate('second')] },
      ],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome).toMatchObject({
      status: 'rejected',
      action: Action.reject('first'),
      decidedBy: { tier: 'plugin', route: { name: 'gate-first' } },
    });
    await runner.close();
  });

  it('an agent route overrides a plugin route, and a strategy route overrides both', async () => {
    const plugin: Plugin = { name: 'limits', signalRoutes: () => [gate('rate_limited')] };
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.UserMessage, action: Action.Continue, name: 'always-answer' }],
          engine: echoEngine().engine,
        },
        { id: 'plain', engine: echoEngine().engine },
        {
          id: 'fsm',
          strategy: () => phaseFsm().create(),
          routes: [{ kind: SignalKind.custom('start'), action: Action.transition('start') }],
          engine: echoEngine().engine,
        },
      ],
      plugins: [plugin],
    });
    expect(await runner.handle({ channel: 'cli', text: 'hi' })).toMatchObject({
      status: 'completed',
      decidedBy: { tier: 'agent' },
    });
    expect(await runner.dispatch('agent:plain:main', signal(SignalKind.UserMessage, 'hi'))).toMatchObject({
      status: 'rejected',
      decidedBy: { tier: 'plugin' },
    });
    await runner.dispatch('agent:fsm:main', signal(SignalKind.custom('start')));
    expect(await runner.dispatch('agent:fsm:main', signal(SignalKind.UserMessage, 'hi'))).toMatchObject({
      action: Action.reject('busy'),
      decidedBy: { tier: 'strategy' },
    });
    await runner.close();
  });

  it('a plugin-tier gate can read per-session state it keeps through PluginContext.on (counted on signal_received, before routing)', async () => {
    const counts = new Map<string, number>();
    const limiter: Plugin = {
      name: 'limiter',
      signalRoutes: () => [
        {
          kind: SignalKind.UserMessage,
          action: Action.reject('rate_limited'),
          predicate: (_s, ctx) => (counts.get(ctx.sessionKey ?? '') ?? 0) > 2,
        },
      ],
      setup: (ctx) => {
        ctx.on((event) => {
          if (event.type === 'signal_received' && event.signal.kind === SignalKind.UserMessage)
            counts.set(event.sessionKey, (counts.get(event.sessionKey) ?? 0) + 1);
        });
      },
    };
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }], plugins: [limiter] });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await runner.handle({ channel: 'cli', text: `m${i}` })).status);
    expect(statuses).toEqual(['completed', 'completed', 'rejected']);
    expect((await runner.dispatch('agent:main:other', signal(SignalKind.UserMessage, 'x'))).status).toBe('completed');
    await runner.close();
  });

  it('two plugins claiming one custom action name make start() reject with a ConfigError naming both', async () => {
    const claim = (name: string): Plugin => ({
      name,
      setup: (ctx) => {
        ctx.handleCustomAction('lookup', () => name);
      },
    });
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [claim('one'), claim('two')],
    });
    const error = await rejectionOf(runner.start());
    expect(ConfigError.isInstance(error)).toBe(true);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toContain('"lookup"');
    expect(problems[0]?.message).toContain('"one"');
    expect(problems[0]?.message).toContain('"two"');
    await runner.close();
  });

  it('handleCustomAction with an empty name or no handler makes start() reject with RUNNER_INPUT_INVALID', async () => {
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [
        {
          name: 'bad',
          setup: (ctx) => {
            ctx.handleCustomAction('', () => 1);
          },
        },
      ],
    });
    const error = await rejectionOf(runner.start());
    expect((error as { code?: string }).code).toBe('RUNNER_INPUT_INVALID');
    await runner.close();
  });
});

describe("the engine's context", () => {
  it('works detached, and spread by a wrapping engine that passes its accessors on by name (as TurnContext says)', async () => {
    const store = new MemoryCheckpointStore();
    const inner = async (ctx: TurnContext): Promise<TurnResult> => {
      // eslint-disable-next-line @typescript-eslint/unbound-method -- what this test checks: they work detached
      const { emit, commit, emitText } = ctx;
      emit({ type: 'thinking' });
      emitText('not streaming: dropped');
      await commit({ step: 1 });
      return { output: ctx.history.length, state: { step: 2 } };
    };
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: (ctx) =>
            /* eslint-disable @typescript-eslint/unbound-method -- what this test checks: the accessors work detached */
            inner({
              ...ctx,
              history: ctx.history.slice(-1),
              signals: ctx.signals,
              abortSignal: ctx.abortSignal,
              emit: ctx.emit,
              emitText: ctx.emitText,
              commit: ctx.commit,
            }),
          /* eslint-enable @typescript-eslint/unbound-method */
        },
      ],
    });
    const events = recordEvents(runner);
    await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'one'));
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'two'));
    expect(outcome).toMatchObject({ status: 'completed', output: 1 });
    expect(events.filter((e) => e.type === 'engine_event')).toHaveLength(2);
    const versions = [];
    for await (const v of store.history(MAIN)) versions.push((v.data as { engine?: unknown }).engine);
    expect(versions.slice(0, 2)).toEqual([{ step: 2 }, { step: 1 }]); // the turn's save, and its commit
    await runner.close();
  });
});

describe('events', () => {
  it('one user message emits signal_received, route_decided, turn_start, engine_event, turn_end, outcome — in that order', async () => {
    const route: SignalRoute = { kind: SignalKind.UserMessage, action: Action.Continue, name: 'chat' };
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [route],
          engine: async (ctx) => {
            ctx.emit({ type: 'thinking', step: 1 });
            return { output: 'ok' };
          },
        },
      ],
    });
    const events = recordEvents(runner);
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    const base = { sessionKey: MAIN, agentId: 'main' };
    const sig = signal(SignalKind.UserMessage, { channel: 'cli', text: 'hi' });
    // RunnerEvent lists the fields each event has at least (core.md): extra fields are allowed.
    expect(events).toEqual([
      expect.objectContaining({ type: 'signal_received', ...base, signal: sig }),
      expect.objectContaining({
        type: 'route_decided',
        ...base,
        signal: sig,
        action: Action.Continue,
        tier: 'agent',
        routeName: 'chat',
      }),
      expect.objectContaining({ type: 'turn_start', ...base }),
      expect.objectContaining({ type: 'engine_event', ...base, event: { type: 'thinking', step: 1 } }),
      expect.objectContaining({ type: 'turn_end', ...base, status: 'completed' }),
      expect.objectContaining({ type: 'outcome', outcome }),
    ]);
  });

  it('a runner default shows in route_decided without a tier', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    const events = recordEvents(runner);
    await runner.handle({ channel: 'cli', text: 'hi' });
    const decided = events.find((e) => e.type === 'route_decided');
    expect(decided).toMatchObject({ action: Action.Continue });
    expect(decided && 'tier' in decided).toBe(false);
    await runner.close();
  });

  it('an unrouted signal emits route_decided with no action, then unrouted, then outcome', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    const events = recordEvents(runner);
    await runner.dispatch(MAIN, signal(SignalKind.Timer));
    expect(events.map((e) => e.type)).toEqual(['signal_received', 'route_decided', 'unrouted', 'outcome']);
    expect(events[1]).toMatchObject({ action: undefined });
    await runner.close();
  });

  it('a listener that throws is reported as a warning event and dispatch goes on; the other listeners get every event', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    const bug = new Error('listener bug');
    runner.on((event) => {
      if (event.type === 'turn_start') throw bug;
    });
    const events = recordEvents(runner);
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome.status).toBe('completed');
    const types = events.map((e) => e.type);
    expect(types).toEqual(['signal_received', 'route_decided', 'warning', 'turn_start', 'turn_end', 'outcome']);
    expect(events[2]).toMatchObject({ type: 'warning', message: expect.stringContaining('turn_start'), cause: bug });
    await runner.close();
  });

  it('a listener that throws on a warning is not reported again (no recursion)', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    let calls = 0;
    runner.on(() => {
      calls++;
      throw new Error('always');
    });
    const events = recordEvents(runner);
    expect((await runner.handle({ channel: 'cli', text: 'hi' })).status).toBe('completed');
    const nonWarnings = events.filter((e) => e.type !== 'warning').length;
    expect(events.filter((e) => e.type === 'warning')).toHaveLength(nonWarnings);
    expect(calls).toBe(events.length);
    await runner.close();
  });

  it('on() returns an unsubscribe function', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    const seen: string[] = [];
    const off = runner.on((e) => seen.push(e.type));
    await runner.handle({ channel: 'cli', text: 'one' });
    const count = seen.length;
    off();
    off();
    await runner.handle({ channel: 'cli', text: 'two' });
    expect(seen).toHaveLength(count);
    await runner.close();
  });

  it('plugins receive events through PluginContext.on', async () => {
    const got: string[] = [];
    const runner = createRunner({
      agents: [{ id: 'main', engine: echoEngine().engine }],
      plugins: [
        {
          name: 'audit',
          setup: (ctx) => {
            ctx.on((e) => {
              if (e.type === 'outcome') got.push(`${e.outcome.sessionKey}:${e.outcome.status}`);
            });
          },
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'hi' });
    await runner.dispatch(MAIN, signal(SignalKind.Timer));
    expect(got).toEqual([`${MAIN}:completed`, `${MAIN}:unrouted`]);
    await runner.close();
  });

  it('an engine event that is not { type: string } becomes a warning; events emitted after the turn ended are dropped', async () => {
    let late: ((e: { type: string }) => void) | undefined;
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            ctx.emit({ kind: 'no type' } as never);
            late = (e) => {
              ctx.emit(e);
            };
            return {};
          },
        },
      ],
    });
    const events = recordEvents(runner);
    await runner.handle({ channel: 'cli', text: 'hi' });
    expect(events.filter((e) => e.type === 'warning')).toHaveLength(1);
    expect(events.some((e) => e.type === 'engine_event')).toBe(false);
    const count = events.length;
    late?.({ type: 'after the end' });
    expect(events).toHaveLength(count);
    await runner.close();
  });
});

describe('events(): an async iterable over runner events', () => {
  async function oneTurn(runner: Runner): Promise<void> {
    await runner.handle({ channel: 'cli', text: 'hi' });
  }

  it('yields the buffered events and ends when its abortSignal fires', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    const controller = new AbortController();
    const iterable = runner.events({ abortSignal: controller.signal });
    await oneTurn(runner);
    controller.abort();
    await oneTurn(runner);
    const events = await collect(iterable);
    expect(events.map((e) => e.type)).toEqual([
      'signal_received',
      'route_decided',
      'turn_start',
      'turn_end',
      'outcome',
    ]);
    await runner.close();
  });

  it('delivers events that arrive while the consumer waits, and ends on close()', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const collected = collect(runner.events());
    const pending = runner.handle({ channel: 'cli', text: 'hi' });
    (await held.turn(0)).finish();
    await pending;
    await runner.close();
    expect((await collected).map((e) => e.type)).toEqual([
      'signal_received',
      'route_decided',
      'turn_start',
      'turn_end',
      'outcome',
    ]);
  });

  it('ends at once for an already aborted abortSignal', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    const iterable = runner.events({ abortSignal: AbortSignal.abort() });
    await oneTurn(runner);
    expect(await collect(iterable)).toEqual([]);
    await runner.close();
  });

  it('breaking out of for-await unsubscribes', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    const iterable = runner.events();
    await oneTurn(runner);
    let first: RunnerEvent | undefined;
    for await (const event of iterable) {
      first = event;
      break;
    }
    expect(first?.type).toBe('signal_received');
    await oneTurn(runner);
    // Nothing left, nothing new: the iterator is finished.
    expect(await iterable[Symbol.asyncIterator]().next()).toEqual({ value: undefined, done: true });
    await runner.close();
  });

  it('an iterable requested after close() ends at once', async () => {
    // Fails (hangs until the test timeout) until events() checks whether the runner already
    // closed (event-hub.ts events(): an iterable created after end() waits forever).
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    await runner.close();
    expect(await collect(runner.events())).toEqual([]);
  }, 1000);
});

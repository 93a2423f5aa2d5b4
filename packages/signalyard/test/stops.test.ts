import { describe, expect, it } from 'vitest';
import { Action, MemoryCheckpointStore, SignalKind, signal, type Outcome, type SignalRoute } from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import { createRunner } from 'signalyard';
import { MAIN, assistant, deferred, heldEngine, recordEvents, stored, track, user } from './support.js';

const forceStopRoute: SignalRoute = { kind: SignalKind.Stop, action: Action.ForceStop, name: 'kill' };
const say = (text: string) => signal(SignalKind.UserMessage, text);

describe('a stop signal routed to force_stop', () => {
  it('aborts the in-flight turn (stopped, nothing from it saved), stops every queued signal, completes itself, and the session goes on', async () => {
    const held = heldEngine();
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, agents: [{ id: 'main', routes: [forceStopRoute], engine: held.engine }] });

    const a = track(runner.dispatch(MAIN, say('a')));
    const turnA = await held.turn(0);
    const b = track(runner.dispatch(MAIN, say('b')));
    const c = track(runner.dispatch(MAIN, say('c')));

    const stop = await runner.dispatch(MAIN, signal(SignalKind.Stop));
    expect(stop).toEqual({
      sessionKey: MAIN,
      agentId: 'main',
      action: Action.ForceStop,
      decidedBy: { tier: 'agent', route: forceStopRoute },
      status: 'completed',
    });
    expect(turnA.ctx.abortSignal.aborted).toBe(true);
    // The queued ones resolved as soon as the stop arrived.
    expect(b.settled && c.settled).toBe(true);
    expect((await b.promise).status).toBe('stopped');
    expect((await c.promise).status).toBe('stopped');

    // The engine ignores the abort and answers late: none of it is kept.
    turnA.finish({ messages: [assistant('too late')], state: { late: true } });
    expect((await a.promise).status).toBe('stopped');
    expect(held.turns).toHaveLength(1);
    const { data } = await stored(store, MAIN);
    expect(data.history).toEqual([user('a')]);
    expect(data.engine).toBeUndefined();

    // Afterwards the session is served normally.
    const d = runner.dispatch(MAIN, say('d'));
    const turnD = await held.turn(1);
    expect(turnD.ctx.abortSignal.aborted).toBe(false);
    expect(turnD.ctx.history).toEqual([user('a'), user('d')]);
    turnD.finish({ output: 'd done', messages: [assistant('d!')] });
    expect(await d).toMatchObject({ status: 'completed', output: 'd done' });
    expect((await stored(store, MAIN)).data.history).toEqual([user('a'), user('d'), assistant('d!')]);
    await runner.close();
  });

  it('works the same from a strategy route', async () => {
    const held = heldEngine();
    const definition = FsmStrategy.builder()
      .initial('on')
      .route({ kind: SignalKind.Stop, action: Action.ForceStop })
      .define();
    const runner = createRunner({ agents: [{ id: 'main', strategy: () => definition.create(), engine: held.engine }] });
    const a = runner.dispatch(MAIN, say('a'));
    const turnA = await held.turn(0);
    const b = runner.dispatch(MAIN, say('b'));
    expect(await runner.dispatch(MAIN, signal(SignalKind.Stop))).toMatchObject({
      status: 'completed',
      action: Action.ForceStop,
      decidedBy: { tier: 'strategy' },
    });
    expect(turnA.ctx.abortSignal.aborted).toBe(true);
    expect((await a).status).toBe('stopped');
    expect((await b).status).toBe('stopped');
    await runner.close();
  });

  it('an engine that honours its abortSignal by rejecting also ends stopped, not failed', async () => {
    const started = deferred();
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [forceStopRoute],
          engine: (ctx) =>
            new Promise((_resolve, reject) => {
              ctx.abortSignal.addEventListener('abort', () => {
                reject(new Error('aborted by the model client'));
              });
              started.resolve();
            }),
        },
      ],
    });
    const a = runner.dispatch(MAIN, say('a'));
    await started.promise;
    await runner.dispatch(MAIN, signal(SignalKind.Stop));
    const outcome = await a;
    expect(outcome.status).toBe('stopped');
    expect(outcome.error).toBeUndefined();
    await runner.close();
  });
});

describe('a stop signal routed to graceful_stop', () => {
  it('lets the in-flight turn finish (completed, saved), stops the queued signals and completes itself; the default for an unrouted stop', async () => {
    const held = heldEngine();
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, agents: [{ id: 'main', engine: held.engine }] });
    const a = track(runner.dispatch(MAIN, say('a')));
    const turnA = await held.turn(0);
    const b = track(runner.dispatch(MAIN, say('b')));

    const stop = await runner.dispatch(MAIN, signal(SignalKind.Stop));
    expect(stop).toMatchObject({ status: 'completed', action: Action.GracefulStop, decidedBy: undefined });
    expect(b.settled).toBe(true);
    expect((await b.promise).status).toBe('stopped');
    expect(turnA.ctx.abortSignal.aborted).toBe(false);
    expect(a.settled).toBe(false);

    turnA.finish({ output: 'finished', messages: [assistant('done')] });
    expect(await a.promise).toMatchObject({ status: 'completed', output: 'finished' });
    expect(held.turns).toHaveLength(1);
    expect((await stored(store, MAIN)).data.history).toEqual([user('a'), assistant('done')]);

    // The session goes on.
    const c = runner.dispatch(MAIN, say('c'));
    (await held.turn(1)).finish();
    expect((await c).status).toBe('completed');
    await runner.close();
  });

  it('a stop for an idle session completes and changes nothing else', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const first = runner.dispatch(MAIN, say('a'));
    (await held.turn(0)).finish({ messages: [assistant('hi')] });
    await first;
    expect(await runner.dispatch(MAIN, signal(SignalKind.Stop))).toMatchObject({
      status: 'completed',
      action: Action.GracefulStop,
    });
    expect((await runner.session(MAIN))?.history).toEqual([user('a'), assistant('hi')]);
    await runner.close();
  });
});

describe('stops that wait their turn', () => {
  it('a stop signal routed to another action is queued and applied in order like any signal', async () => {
    const held = heldEngine();
    const runner = createRunner({
      agents: [
        { id: 'main', routes: [{ kind: SignalKind.Stop, action: Action.reject('not now') }], engine: held.engine },
      ],
    });
    const order: string[] = [];
    const note = (name: string) => (o: Outcome) => {
      order.push(`${name}:${o.status}`);
      return o;
    };
    const a = runner.dispatch(MAIN, say('a')).then(note('a'));
    const turnA = await held.turn(0);
    const b = runner.dispatch(MAIN, say('b')).then(note('b'));
    const stop = runner.dispatch(MAIN, signal(SignalKind.Stop)).then(note('stop'));
    turnA.finish();
    (await held.turn(1)).finish();
    await Promise.all([a, b, stop]);
    expect(order).toEqual(['a:completed', 'b:completed', 'stop:rejected']);
    expect(turnA.ctx.abortSignal.aborted).toBe(false);
    await runner.close();
  });

  it('a non-stop signal routed to force_stop completes at its turn and stops the signals queued behind it, not the ones before', async () => {
    const HALT = SignalKind.custom('halt');
    const held = heldEngine();
    const runner = createRunner({
      agents: [{ id: 'main', routes: [{ kind: HALT, action: Action.ForceStop }], engine: held.engine }],
    });
    const a = runner.dispatch(MAIN, say('a'));
    const turnA = await held.turn(0);
    const halt = track(runner.dispatch(MAIN, signal(HALT)));
    const b = runner.dispatch(MAIN, say('b'));
    const c = runner.dispatch(MAIN, say('c'));
    expect(turnA.ctx.abortSignal.aborted).toBe(false);
    expect(halt.settled).toBe(false);
    turnA.finish({ output: 'a done' });
    expect(await a).toMatchObject({ status: 'completed', output: 'a done' });
    expect(await halt.promise).toMatchObject({
      status: 'completed',
      action: Action.ForceStop,
      decidedBy: { tier: 'agent' },
    });
    expect((await b).status).toBe('stopped');
    expect((await c).status).toBe('stopped');
    expect(held.turns.map((t) => t.text)).toEqual(['a']);
    const d = runner.dispatch(MAIN, say('d'));
    (await held.turn(1)).finish();
    expect((await d).status).toBe('completed');
    await runner.close();
  });

  it('a turn returning a stop action completes and stops the signals queued behind it', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const a = runner.dispatch(MAIN, say('a'));
    const turnA = await held.turn(0);
    const b = runner.dispatch(MAIN, say('b'));
    turnA.finish({ actions: [Action.GracefulStop] });
    expect((await a).status).toBe('completed');
    expect((await b).status).toBe('stopped');
    expect(held.turns).toHaveLength(1);
    await runner.close();
  });
});

describe('stops for signals that have not started yet', () => {
  // runner.md §5: a stop is routed on arrival, without waiting in the queue; signals queued
  // behind it resolve `stopped` as soon as it arrives. These fail until the runner routes a
  // stop on arrival whenever the session has queued signals, not only while a turn is in
  // flight (runner.ts #enqueue: `session.running !== undefined && session.router !== undefined`).

  it('a stop dispatched right after a message, before its turn started, stops that message', async () => {
    const ran: string[] = [];
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [forceStopRoute],
          engine: async (ctx) => {
            ran.push(String(ctx.history.at(-1)?.content));
            return {};
          },
        },
      ],
    });
    await runner.dispatch(MAIN, say('warm-up'));
    const a = runner.dispatch(MAIN, say('a'));
    const stop = runner.dispatch(MAIN, signal(SignalKind.Stop));
    expect(await stop).toMatchObject({ status: 'completed', action: Action.ForceStop });
    expect((await a).status).toBe('stopped');
    expect(ran).toEqual(['warm-up']);
    await runner.close();
  });

  it('a signal never starts inside the dispatch() that queued it, even on an idle session', async () => {
    const ran: string[] = [];
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [forceStopRoute],
          engine: async (ctx) => {
            ran.push(String(ctx.history.at(-1)?.content)); // synchronously, when the turn starts
            return {};
          },
        },
      ],
    });
    await runner.dispatch(MAIN, say('warm-up'));
    await new Promise((resolve) => setTimeout(resolve, 0)); // the session's queue is idle again
    const a = runner.dispatch(MAIN, say('a'));
    expect(ran).toEqual(['warm-up']);
    const stop = runner.dispatch(MAIN, signal(SignalKind.Stop));
    expect(await stop).toMatchObject({ status: 'completed', action: Action.ForceStop });
    expect((await a).status).toBe('stopped');
    expect(ran).toEqual(['warm-up']);
    await runner.close();
  });

  it('a stop for a session whose signals wait for a concurrency slot stops them without running them', async () => {
    const slot = deferred();
    const holding = deferred();
    const ran: string[] = [];
    const runner = createRunner({
      maxConcurrentSessions: 1,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            const text = String(ctx.history.at(-1)?.content);
            ran.push(text);
            if (text === 'hold') {
              holding.resolve();
              await slot.promise;
            }
            return {};
          },
        },
      ],
    });
    const other = runner.dispatch('agent:main:other', say('hold'));
    await holding.promise;
    const b1 = runner.dispatch('agent:main:b', say('b1'));
    const b2 = runner.dispatch('agent:main:b', say('b2'));
    const stop = runner.dispatch('agent:main:b', signal(SignalKind.Stop));
    slot.resolve();
    expect((await other).status).toBe('completed');
    expect(await stop).toMatchObject({ status: 'completed', action: Action.GracefulStop });
    expect((await b1).status).toBe('stopped');
    expect((await b2).status).toBe('stopped');
    expect(ran).toEqual(['hold']);
    await runner.close();
  });
});

describe('a force_stop while the turn applies its actions', () => {
  it('ends the turn stopped (not failed) when it lands during a custom action the turn returned', async () => {
    // Fails until #turn reports an abort seen by a TurnResult custom action as `stopped`
    // (runner.ts #turn: the actions loop turns the AbortedError into a `failed` refusal, so the
    // `if (stop.aborted)` check after the loop never runs for it).
    const started = deferred();
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          routes: [forceStopRoute],
          engine: async () => ({ messages: [assistant('x')], actions: [Action.custom('slow')] }),
        },
      ],
      plugins: [
        {
          name: 'slow',
          setup(ctx) {
            ctx.handleCustomAction('slow', () => {
              started.resolve();
              return new Promise(() => undefined);
            });
          },
        },
      ],
    });
    const a = runner.dispatch(MAIN, say('a'));
    await started.promise;
    expect((await runner.dispatch(MAIN, signal(SignalKind.Stop))).status).toBe('completed');
    const outcome = await a;
    expect((await stored(store, MAIN)).data.history).toEqual([user('a')]);
    expect(outcome.status).toBe('stopped');
    await runner.close();
  });
});

describe("the caller's own abortSignal", () => {
  it('stops a queued signal at once without running it; the others are unaffected', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const a = runner.dispatch(MAIN, say('a'));
    const turnA = await held.turn(0);
    const controller = new AbortController();
    const b = track(runner.dispatch(MAIN, say('b'), { abortSignal: controller.signal }));
    const c = runner.dispatch(MAIN, say('c'));
    controller.abort();
    expect(await b.promise).toMatchObject({ status: 'stopped', action: undefined });
    expect(turnA.ctx.abortSignal.aborted).toBe(false);
    turnA.finish();
    const turnC = await held.turn(1);
    expect(turnC.text).toBe('c');
    turnC.finish();
    expect((await a).status).toBe('completed');
    expect((await c).status).toBe('completed');
    expect(held.turns.map((t) => t.text)).toEqual(['a', 'c']);
    await runner.close();
  });

  it('an already aborted signal resolves stopped without running', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const outcome = await runner.handle({ channel: 'cli', text: 'never' }, { abortSignal: AbortSignal.abort() });
    expect(outcome.status).toBe('stopped');
    expect(held.turns).toHaveLength(0);
    await runner.close();
  });

  it('aborts the in-flight turn of that signal only: stopped, and the next signal runs', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const controller = new AbortController();
    const a = runner.handle({ channel: 'cli', text: 'a' }, { abortSignal: controller.signal });
    const turnA = await held.turn(0);
    const b = runner.handle({ channel: 'cli', text: 'b' });
    controller.abort();
    expect(turnA.ctx.abortSignal.aborted).toBe(true);
    expect((await a).status).toBe('stopped');
    const turnB = await held.turn(1);
    expect(turnB.ctx.abortSignal.aborted).toBe(false);
    turnB.finish();
    expect((await b).status).toBe('completed');
    await runner.close();
  });

  it('aborting after the outcome changes nothing', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: async () => ({ output: 1 }) }] });
    const controller = new AbortController();
    const outcome = await runner.handle({ channel: 'cli', text: 'a' }, { abortSignal: controller.signal });
    controller.abort();
    expect(outcome.status).toBe('completed');
    expect((await runner.handle({ channel: 'cli', text: 'b' })).status).toBe('completed');
    await runner.close();
  });

  it('stops a custom action in flight and aborts the abortSignal its handler got', async () => {
    const LOOKUP = SignalKind.custom('lookup');
    const started = deferred<AbortSignal>();
    const runner = createRunner({
      agents: [
        { id: 'main', routes: [{ kind: LOOKUP, action: Action.custom('lookup') }], engine: heldEngine().engine },
      ],
      plugins: [
        {
          name: 'slow',
          setup(ctx) {
            ctx.handleCustomAction('lookup', ({ abortSignal }) => {
              started.resolve(abortSignal);
              return new Promise(() => undefined);
            });
          },
        },
      ],
    });
    const controller = new AbortController();
    const pending = runner.dispatch(MAIN, signal(LOOKUP), { abortSignal: controller.signal });
    const handlerSignal = await started.promise;
    controller.abort();
    expect(handlerSignal.aborted).toBe(true);
    expect((await pending).status).toBe('stopped');
    await runner.close();
  });
});

describe('stop routing failures', () => {
  it('a stop whose route predicate throws fails, and the in-flight and queued signals are unaffected', async () => {
    const held = heldEngine();
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [
            {
              kind: SignalKind.Stop,
              action: Action.ForceStop,
              predicate: () => {
                throw new Error('bad predicate');
              },
            },
          ],
          engine: held.engine,
        },
      ],
    });
    const events = recordEvents(runner);
    const a = runner.dispatch(MAIN, say('a'));
    const turnA = await held.turn(0);
    const b = runner.dispatch(MAIN, say('b'));
    const stop = await runner.dispatch(MAIN, signal(SignalKind.Stop));
    expect(stop.status).toBe('failed');
    expect(stop.error?.code).toBe('ROUTE_PREDICATE_FAILED');
    expect(turnA.ctx.abortSignal.aborted).toBe(false);
    turnA.finish();
    (await held.turn(1)).finish();
    expect((await a).status).toBe('completed');
    expect((await b).status).toBe('completed');
    expect(events.filter((e) => e.type === 'signal_received' && e.signal.kind === SignalKind.Stop)).toHaveLength(1);
    await runner.close();
  });
});

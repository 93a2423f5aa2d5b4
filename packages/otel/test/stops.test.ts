import { Action, SignalKind, signal, type Signal } from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import { otelPlugin } from '@signalyard/otel';
import { createRunner, type EngineFn, type TurnContext, type TurnResult } from 'signalyard';
import { describe, expect, it } from 'vitest';
import { childrenOf, deferred, named, parentIdOf, idOf, tracing, treeOf, type Deferred } from './support.js';

const KEY = 'agent:main:main';

/** An engine whose turns wait for the test; an aborted turn rejects. */
function heldEngine() {
  const turns: { ctx: TurnContext; done: Deferred<TurnResult> }[] = [];
  const waiting: Deferred[] = [];
  const engine: EngineFn = (ctx) => {
    const done = deferred<TurnResult>();
    turns.push({ ctx, done });
    waiting.shift()?.resolve();
    ctx.abortSignal.addEventListener('abort', () => done.resolve(Promise.reject(new Error('aborted')) as never), {
      once: true,
    });
    return done.promise;
  };
  return {
    engine,
    turns,
    /** Resolves once `n` turns have started. */
    started(n: number): Promise<void> {
      if (turns.length >= n) return Promise.resolve();
      const d = deferred();
      waiting.push(d);
      return d.promise.then(() => this.started(n));
    },
  };
}

const desk = FsmStrategy.builder().initial('open').transition('open', 'close', 'closed').define();

function setup(stopAction: Action) {
  const t = tracing();
  const held = heldEngine();
  const runner = createRunner({
    agents: [
      {
        id: 'main',
        strategy: () => desk.create(),
        routes: [{ kind: SignalKind.Stop, name: 'stop', action: stopAction }],
        engine: held.engine,
      },
    ],
    plugins: [otelPlugin({ tracer: t.tracer })],
  });
  return { t, held, runner };
}

const message = (text: string): Signal => signal(SignalKind.UserMessage, text);

describe('stops', () => {
  it('a force_stop routed on arrival gets its own signal span beside the in-flight signal it stops', async () => {
    const { t, held, runner } = setup(Action.ForceStop);
    const a = runner.dispatch(KEY, message('a'));
    await held.started(1);
    const b = runner.dispatch(KEY, message('b'));
    const stop = await runner.dispatch(KEY, signal(SignalKind.Stop, null));
    expect(stop.status).toBe('completed');
    expect((await a).status).toBe('stopped');
    expect((await b).status).toBe('stopped');
    await runner.close();

    const spans = t.spans();
    const roots = childrenOf(spans, undefined);
    expect(
      roots.map((r) => [
        r.attributes['signalyard.signal_kind'],
        r.attributes['signalyard.status'],
        r.attributes['signalyard.action'],
      ]),
    ).toEqual([
      ['user_message', 'stopped', 'continue'], // a: in flight, aborted
      ['stop', 'completed', 'force_stop'], // the stop itself, routed on arrival
      ['user_message', 'stopped', undefined], // b: stopped in the queue, never applied
    ]);
    const [aSpan, stopSpan, bSpan] = roots;
    expect(treeOf(spans, aSpan!)).toEqual(['signalyard.signal', [['signalyard.turn', []]]]);
    expect(childrenOf(spans, aSpan)[0]?.attributes['signalyard.status']).toBe('stopped');
    expect(treeOf(spans, stopSpan!)).toEqual(['signalyard.signal', []]);
    expect(stopSpan?.attributes).toMatchObject({
      'signalyard.tier': 'agent',
      'signalyard.route': 'stop',
      'signalyard.session_key': KEY,
    });
    expect(treeOf(spans, bSpan!)).toEqual(['signalyard.signal', []]);
    expect(t.openCount()).toBe(0);
  });

  it('a graceful_stop on arrival leaves the in-flight turn on its own signal span', async () => {
    const { t, held, runner } = setup(Action.GracefulStop);
    const a = runner.dispatch(KEY, message('a'));
    await held.started(1);
    expect((await runner.dispatch(KEY, signal(SignalKind.Stop, null))).status).toBe('completed');
    held.turns[0]?.done.resolve({ messages: [{ role: 'assistant', content: 'done' }] });
    expect((await a).status).toBe('completed');
    await runner.close();
    const spans = t.spans();
    const [aSpan, stopSpan] = childrenOf(spans, undefined);
    expect(aSpan?.attributes['signalyard.status']).toBe('completed');
    expect(treeOf(spans, aSpan!)).toEqual(['signalyard.signal', [['signalyard.turn', []]]]);
    expect(stopSpan?.attributes).toMatchObject({
      'signalyard.signal_kind': 'stop',
      'signalyard.action': 'graceful_stop',
    });
    expect(treeOf(spans, stopSpan!)).toEqual(['signalyard.signal', []]);
  });

  it('a stop routed on arrival to a non-stop action waits its turn and gets its transition on its own span', async () => {
    const { t, held, runner } = setup(Action.transition('close'));
    const a = runner.dispatch(KEY, message('a'));
    await held.started(1);
    const stop = runner.dispatch(KEY, signal(SignalKind.Stop, null));
    // The in-flight turn goes on after the stop was routed: its events stay on its own span.
    held.turns[0]?.ctx.emit({ type: 'stage_start', stage: 'work' });
    held.turns[0]?.ctx.emit({ type: 'stage_end', stage: 'work', output: {}, failed: false, next: 'end' });
    held.turns[0]?.done.resolve({});
    expect((await a).status).toBe('completed');
    expect((await stop).status).toBe('completed');
    await runner.close();

    const spans = t.spans();
    const [aSpan, stopSpan] = childrenOf(spans, undefined);
    expect(treeOf(spans, aSpan!)).toEqual([
      'signalyard.signal',
      [['signalyard.turn', [['signalyard.pipeline.stage', []]]]],
    ]);
    expect(treeOf(spans, stopSpan!)).toEqual(['signalyard.signal', [['signalyard.transition', []]]]);
    expect(stopSpan?.attributes).toMatchObject({
      'signalyard.signal_kind': 'stop',
      'signalyard.action': 'transition(close)',
      'signalyard.status': 'completed',
    });
  });

  it('a stop for a session whose signal waits for a slot (nothing in flight) is a span of its own; the queued one ends stopped', async () => {
    const t = tracing();
    const held = heldEngine();
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.Stop, name: 'stop', action: Action.GracefulStop }],
          engine: held.engine,
        },
      ],
      plugins: [otelPlugin({ tracer: t.tracer })],
      maxConcurrentSessions: 1,
    });
    const a = runner.dispatch('agent:main:a', message('a'));
    await held.started(1);
    const b = runner.dispatch('agent:main:b', message('b')); // waits for the one slot
    expect((await runner.dispatch('agent:main:b', signal(SignalKind.Stop, null))).status).toBe('completed');
    expect((await b).status).toBe('stopped');
    held.turns[0]?.done.resolve({});
    expect((await a).status).toBe('completed');
    await runner.close();
    const spans = t.spans();
    const rows = childrenOf(spans, undefined).map((r) => [
      r.attributes['signalyard.session_key'],
      r.attributes['signalyard.signal_kind'],
      r.attributes['signalyard.status'],
    ]);
    expect(rows).toEqual([
      ['agent:main:a', 'user_message', 'completed'],
      ['agent:main:b', 'stop', 'completed'],
      ['agent:main:b', 'user_message', 'stopped'],
    ]);
    expect(treeOf(spans, childrenOf(spans, undefined)[0]!)).toEqual(['signalyard.signal', [['signalyard.turn', []]]]);
    expect(t.openCount()).toBe(0);
  });

  it("a caller's abortSignal stops its in-flight signal: stopped span with its turn", async () => {
    const { t, held, runner } = setup(Action.ForceStop);
    const controller = new AbortController();
    const a = runner.dispatch(KEY, message('a'), { abortSignal: controller.signal });
    await held.started(1);
    controller.abort();
    expect((await a).status).toBe('stopped');
    await runner.close();
    const spans = t.spans();
    const [turn] = named(spans, 'signalyard.turn');
    const [root] = named(spans, 'signalyard.signal');
    expect(parentIdOf(turn!)).toBe(idOf(root!));
    expect(root?.attributes['signalyard.status']).toBe('stopped');
  });

  it('close() with a turn in flight and signals queued ends every span', async () => {
    const { t, held, runner } = setup(Action.ForceStop);
    const a = runner.dispatch(KEY, message('a'));
    await held.started(1);
    const b = runner.dispatch(KEY, message('b'));
    const closing = runner.close();
    held.turns[0]?.done.resolve({});
    await closing;
    expect((await a).status).toBe('completed');
    expect((await b).status).toBe('stopped');
    expect(named(t.spans(), 'signalyard.signal').map((s) => s.attributes['signalyard.status'])).toEqual([
      'completed',
      'stopped',
    ]);
    expect(t.openCount()).toBe(0);
  });
});

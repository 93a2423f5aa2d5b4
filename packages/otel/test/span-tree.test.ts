import { Action, MemoryCheckpointStore, SignalKind, signal, type ChatModel } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { FsmStrategy } from '@signalyard/fsm';
import { otelPlugin } from '@signalyard/otel';
import { definePipeline } from '@signalyard/pipeline';
import { SpanStatusCode, context, ROOT_CONTEXT, createContextKey } from '@opentelemetry/api';
import { createRunner, crewEngine, pipelineEngine, type Engine, type TurnContext } from 'signalyard';
import { describe, expect, it } from 'vitest';
import { childrenOf, deferred, type Deferred, named, textsOf, tracing, treeOf, type Tracing } from './support.js';

const crewYaml = `
entry_point: triage
agents:
  - id: triage
  - id: billing
routing:
  signals:
    triage:
      - { signal: "[ROUTE_BILLING]", target: billing }
    billing:
      - { signal: "[DONE]", target: "" }
`;

const USER_TEXT = 'I was charged twice for order 4711';
const TRIAGE_REPLY = 'Let me route you to billing. [ROUTE_BILLING]';
const BILLING_REPLY = 'Refund issued for order 4711. [DONE]';

const desk = FsmStrategy.builder()
  .initial('new')
  .transition('new', 'triage', 'triaged')
  .transition('triaged', 'triage', 'triaged')
  .define();

/** The flagship shape: an FSM agent whose crew engine hands off, then asks for an FSM transition. */
function flagship(t: Tracing, opts: { recordContent?: boolean; model?: ChatModel } = {}) {
  const crew = crewEngine(parseCrewConfig(crewYaml), {
    model: opts.model ?? scriptedModel({ triage: [TRIAGE_REPLY], billing: [BILLING_REPLY] }),
  });
  const engine: Engine = {
    async turn(ctx: TurnContext) {
      const result = await crew.turn(ctx);
      return { ...result, actions: [Action.transition('triage')] };
    },
  };
  return createRunner({
    agents: [
      {
        id: 'support',
        strategy: () => desk.create(),
        routes: [{ kind: SignalKind.UserMessage, name: 'chat', action: Action.Continue }],
        engine,
      },
    ],
    plugins: [
      otelPlugin({ tracer: t.tracer, ...(opts.recordContent !== undefined && { recordContent: opts.recordContent }) }),
    ],
  });
}

const dm = (text: string, id = '9') => ({ channel: 'telegram', peer: { kind: 'dm' as const, id }, text });

describe('the span tree of a flagship run', () => {
  it('records signal → turn → crew agents (with the handoff as an event) and the FSM transition under the signal', async () => {
    const t = tracing();
    const runner = flagship(t);
    const outcome = await runner.handle(dm(USER_TEXT));
    expect(outcome.status).toBe('completed');
    await runner.close();

    const spans = t.spans();
    const [root, ...others] = childrenOf(spans, undefined);
    expect(others).toEqual([]);
    expect(root?.name).toBe('signalyard.signal');
    expect(treeOf(spans, root!)).toEqual([
      'signalyard.signal',
      [
        [
          'signalyard.turn',
          [
            ['signalyard.crew.agent', []],
            ['signalyard.crew.agent', []],
          ],
        ],
        ['signalyard.transition', []],
      ],
    ]);
    expect(root?.attributes).toEqual({
      'signalyard.session_key': outcome.sessionKey,
      'signalyard.agent_id': 'support',
      'signalyard.signal_kind': 'user_message',
      'signalyard.action': 'continue',
      'signalyard.tier': 'agent',
      'signalyard.route': 'chat',
      'signalyard.status': 'completed',
    });
    expect(root?.status.code).toBe(SpanStatusCode.UNSET);

    const [turn] = named(spans, 'signalyard.turn');
    expect(turn?.attributes).toEqual({ 'signalyard.status': 'completed' });

    const [triage, billing] = named(spans, 'signalyard.crew.agent');
    expect(triage?.attributes).toEqual({ 'signalyard.crew.agent_id': 'triage' });
    expect(billing?.attributes).toEqual({ 'signalyard.crew.agent_id': 'billing' });
    expect(triage?.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'signalyard.crew.handoff',
        {
          'signalyard.crew.from': 'triage',
          'signalyard.crew.to': 'billing',
          'signalyard.crew.via': 'signal',
          'signalyard.crew.signal': '[ROUTE_BILLING]',
          'signalyard.crew.handoffs': 1,
        },
      ],
    ]);
    expect(billing?.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'signalyard.crew.terminate',
        {
          'signalyard.crew.agent_id': 'billing',
          'signalyard.crew.reason': 'terminated_by_signal',
          'signalyard.crew.signal': '[DONE]',
        },
      ],
    ]);

    const [transition] = named(spans, 'signalyard.transition');
    expect(transition?.attributes).toEqual({
      'signalyard.transition.from': 'new',
      'signalyard.transition.action': 'triage',
      'signalyard.transition.to': 'triaged',
    });
    // Every span of the signal is in its trace, and all of them ended.
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(t.openCount()).toBe(0);
  });

  it('records a pipeline stage pair as signalyard.pipeline.stage spans under the turn', async () => {
    const t = tracing();
    const review = definePipeline({
      name: 'review',
      stages: [
        { name: 'plan', run: () => ({ steps: 2 }), defaultNext: 'check' },
        { name: 'check', run: () => ({ ok: true }) },
      ],
    });
    const runner = createRunner({
      agents: [{ id: 'reviewer', engine: pipelineEngine(review) }],
      plugins: [otelPlugin({ tracer: t.tracer })],
    });
    const outcome = await runner.handle(dm('review my change'));
    expect(outcome.status).toBe('completed');
    await runner.close();

    const spans = t.spans();
    const [root] = childrenOf(spans, undefined);
    expect(treeOf(spans, root!)).toEqual([
      'signalyard.signal',
      [
        [
          'signalyard.turn',
          [
            ['signalyard.pipeline.stage', []],
            ['signalyard.pipeline.stage', []],
          ],
        ],
      ],
    ]);
    // A runner default (unrouted user_message → continue) has no tier or route.
    expect(root?.attributes).toEqual({
      'signalyard.session_key': outcome.sessionKey,
      'signalyard.agent_id': 'reviewer',
      'signalyard.signal_kind': 'user_message',
      'signalyard.action': 'continue',
      'signalyard.status': 'completed',
    });
    expect(named(spans, 'signalyard.pipeline.stage').map((s) => s.attributes)).toEqual([
      { 'signalyard.pipeline.stage': 'plan', 'signalyard.pipeline.failed': false, 'signalyard.pipeline.next': 'check' },
      { 'signalyard.pipeline.stage': 'check', 'signalyard.pipeline.failed': false, 'signalyard.pipeline.next': 'end' },
    ]);
  });

  it('records a failed stage with error status and a pipeline interrupt as a turn event', async () => {
    const t = tracing();
    const pipeline = definePipeline({
      name: 'ask',
      stages: [
        {
          name: 'flaky',
          run: () => {
            throw new Error('stage broke');
          },
          errorNext: 'ask',
        },
        { name: 'ask', run: (ctx) => ctx.interrupt('clarification', { question: 'Which order?' }) },
      ],
    });
    const runner = createRunner({
      agents: [{ id: 'asker', engine: pipelineEngine(pipeline) }],
      plugins: [otelPlugin({ tracer: t.tracer })],
    });
    const outcome = await runner.handle(dm('help'));
    expect(outcome.status).toBe('paused');
    await runner.close();
    const spans = t.spans();
    const [flaky] = named(spans, 'signalyard.pipeline.stage');
    expect(flaky?.attributes).toMatchObject({
      'signalyard.pipeline.stage': 'flaky',
      'signalyard.pipeline.failed': true,
    });
    expect(flaky?.status.code).toBe(SpanStatusCode.ERROR);
    const [turn] = named(spans, 'signalyard.turn');
    expect(turn?.attributes['signalyard.status']).toBe('paused');
    expect(turn?.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'signalyard.pipeline.interrupt',
        { 'signalyard.pipeline.interrupt_kind': 'clarification', 'signalyard.pipeline.stage': 'ask' },
      ],
    ]);
    expect(named(spans, 'signalyard.signal')[0]?.attributes['signalyard.status']).toBe('paused');
  });

  it('records a signal routed to a transition: a transition span and no turn', async () => {
    const t = tracing();
    const runner = createRunner({
      agents: [
        {
          id: 'desk',
          strategy: () => desk.create(),
          routes: [{ kind: SignalKind.Timer, name: 'tick', action: Action.transition('triage') }],
          engine: () => Promise.resolve({}),
        },
      ],
      plugins: [otelPlugin({ tracer: t.tracer })],
    });
    const outcome = await runner.dispatch('agent:desk:main', signal(SignalKind.Timer, null));
    expect(outcome.status).toBe('completed');
    await runner.close();
    const spans = t.spans();
    const [root] = childrenOf(spans, undefined);
    expect(treeOf(spans, root!)).toEqual(['signalyard.signal', [['signalyard.transition', []]]]);
    expect(root?.attributes).toMatchObject({
      'signalyard.signal_kind': 'timer',
      'signalyard.action': 'transition(triage)',
      'signalyard.tier': 'agent',
      'signalyard.route': 'tick',
    });
  });
});

describe('failures', () => {
  it('records a failed outcome as an error span with the exception', async () => {
    const t = tracing();
    const model = scriptedModel({
      triage: [
        () => {
          throw new Error('provider down');
        },
      ],
    });
    const runner = flagship(t, { model });
    const outcome = await runner.handle(dm(USER_TEXT));
    expect(outcome.status).toBe('failed');
    await runner.close();

    const spans = t.spans();
    const [root] = named(spans, 'signalyard.signal');
    expect(root?.status).toEqual({ code: SpanStatusCode.ERROR, message: outcome.error?.message });
    expect(root?.attributes).toMatchObject({
      'signalyard.status': 'failed',
      'signalyard.error_code': 'CREW_AGENT_FAILED',
    });
    const exception = root?.events.find((e) => e.name === 'exception');
    expect(exception?.attributes).toMatchObject({
      'exception.type': 'CREW_AGENT_FAILED',
      'exception.message': outcome.error?.message,
    });
    const [turn] = named(spans, 'signalyard.turn');
    expect(turn?.status.code).toBe(SpanStatusCode.ERROR);
    expect(turn?.attributes['signalyard.status']).toBe('failed');
    // The agent whose model threw still has its span, ended.
    expect(named(spans, 'signalyard.crew.agent').map((s) => s.attributes['signalyard.crew.agent_id'])).toEqual([
      'triage',
    ]);
    expect(t.openCount()).toBe(0);
  });

  it('a rejected or unrouted signal is not an error span', async () => {
    const t = tracing();
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.UserMessage, name: 'gate', action: Action.reject('closed') }],
          engine: () => Promise.resolve({}),
        },
      ],
      plugins: [otelPlugin({ tracer: t.tracer })],
    });
    expect((await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'hi'))).status).toBe('rejected');
    expect((await runner.dispatch('agent:main:main', signal(SignalKind.ToolResult, {}))).status).toBe('unrouted');
    await runner.close();
    const spans = named(t.spans(), 'signalyard.signal');
    expect(
      spans.map((s) => [s.attributes['signalyard.status'], s.attributes['signalyard.action'], s.status.code]),
    ).toEqual([
      ['rejected', 'reject(closed)', SpanStatusCode.UNSET],
      ['unrouted', undefined, SpanStatusCode.UNSET],
    ]);
  });
});

describe('message text', () => {
  it('records no message text in any span attribute or event by default', async () => {
    const t = tracing();
    const runner = flagship(t);
    await runner.handle(dm(USER_TEXT));
    await runner.close();
    const spans = t.spans();
    expect(spans.length).toBeGreaterThan(0);
    const texts = spans.flatMap(textsOf);
    for (const secret of [USER_TEXT, TRIAGE_REPLY, BILLING_REPLY, '4711']) {
      expect(texts.filter((x) => x.includes(secret))).toEqual([]);
    }
    expect(spans.every((s) => !('signalyard.content' in s.attributes))).toBe(true);
  });

  it('records the user text and the agents replies with recordContent: true', async () => {
    const t = tracing();
    const runner = flagship(t, { recordContent: true });
    await runner.handle(dm(USER_TEXT));
    await runner.close();
    const spans = t.spans();
    expect(named(spans, 'signalyard.signal')[0]?.attributes['signalyard.content']).toBe(USER_TEXT);
    expect(named(spans, 'signalyard.crew.agent').map((s) => s.attributes['signalyard.content'])).toEqual([
      TRIAGE_REPLY,
      BILLING_REPLY,
    ]);
  });

  it('records pipeline stage outputs and interrupt payloads only with recordContent', async () => {
    const pipeline = definePipeline({
      name: 'ask',
      stages: [
        { name: 'plan', run: () => ({ secret: 'plan-output-xyz' }), defaultNext: 'ask' },
        { name: 'ask', run: (ctx) => ctx.interrupt('clarification', { question: 'secret-question-xyz' }) },
      ],
    });
    for (const recordContent of [false, true]) {
      const t = tracing();
      const runner = createRunner({
        agents: [{ id: 'asker', engine: pipelineEngine(pipeline) }],
        plugins: [otelPlugin({ tracer: t.tracer, recordContent })],
      });
      await runner.handle(dm('secret-input-xyz'));
      await runner.close();
      const texts = t.spans().flatMap(textsOf).join('\n');
      expect(texts.includes('plan-output-xyz')).toBe(recordContent);
      expect(texts.includes('secret-question-xyz')).toBe(recordContent);
      expect(texts.includes('secret-input-xyz')).toBe(recordContent);
    }
  });
});

describe('interleaved sessions', () => {
  it('signals of different sessions in flight at once produce separate trees', async () => {
    const t = tracing();
    const gates = new Map<string, Deferred>();
    const started = new Map<string, Deferred>();
    for (const id of ['a', 'b']) {
      gates.set(id, deferred());
      started.set(id, deferred());
    }
    const pipeline = definePipeline({
      name: 'slow',
      stages: [
        {
          name: 'wait',
          run: async (ctx) => {
            const id = (ctx.input as { text: string }).text;
            started.get(id)?.resolve();
            await gates.get(id)?.promise;
            return { id };
          },
        },
      ],
    });
    // recordContent shows which session each stage ran for.
    const runner = createRunner({
      agents: [{ id: 'slow', engine: pipelineEngine(pipeline) }],
      plugins: [otelPlugin({ tracer: t.tracer, recordContent: true })],
    });
    const a = runner.handle(dm('a', '1'));
    const b = runner.handle(dm('b', '2'));
    await started.get('a')?.promise;
    await started.get('b')?.promise;
    // b finishes first, while a is still in its stage.
    gates.get('b')?.resolve();
    const ob = await b;
    gates.get('a')?.resolve();
    const oa = await a;
    await runner.close();

    const spans = t.spans();
    const roots = childrenOf(spans, undefined);
    expect(roots).toHaveLength(2);
    const rootOf = (key: string) => roots.find((r) => r.attributes['signalyard.session_key'] === key)!;
    for (const [id, key] of [
      ['a', oa.sessionKey],
      ['b', ob.sessionKey],
    ] as const) {
      const root = rootOf(key);
      expect(root.attributes['signalyard.content']).toBe(id);
      expect(treeOf(spans, root)).toEqual([
        'signalyard.signal',
        [['signalyard.turn', [['signalyard.pipeline.stage', []]]]],
      ]);
      const stage = childrenOf(spans, childrenOf(spans, root)[0])[0]!;
      expect(stage.attributes['signalyard.content']).toBe(JSON.stringify({ id }));
      // Each tree is its own trace.
      expect(spans.filter((s) => s.spanContext().traceId === root.spanContext().traceId)).toHaveLength(3);
    }
    expect(rootOf(oa.sessionKey).spanContext().traceId).not.toBe(rootOf(ob.sessionKey).spanContext().traceId);
  });

  it('many sessions at once: one signal span per signal, each with its own turn', async () => {
    const t = tracing();
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async () => {
            await Promise.resolve();
            return { messages: [{ role: 'assistant', content: 'ok' }] };
          },
        },
      ],
      plugins: [otelPlugin({ tracer: t.tracer })],
      store: new MemoryCheckpointStore(),
    });
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) => runner.handle(dm(`m${i}`, String(i % 10)))),
    );
    expect(outcomes.every((o) => o.status === 'completed')).toBe(true);
    await runner.close();
    const spans = t.spans();
    const signals = named(spans, 'signalyard.signal');
    expect(signals).toHaveLength(50);
    expect(named(spans, 'signalyard.turn')).toHaveLength(50);
    for (const root of signals) expect(treeOf(spans, root)).toEqual(['signalyard.signal', [['signalyard.turn', []]]]);
    expect(new Set(signals.map((s) => s.attributes['signalyard.session_key'])).size).toBe(10);
    expect(t.openCount()).toBe(0);
  });
});

describe('context', () => {
  it('registers no context manager: the active context stays the root across awaits', async () => {
    const t = tracing();
    const runner = flagship(t);
    await runner.start();
    const key = createContextKey('probe');
    await context.with(ROOT_CONTEXT.setValue(key, 1), async () => {
      await runner.handle(dm(USER_TEXT));
      expect(context.active()).toBe(ROOT_CONTEXT);
    });
    await runner.close();
  });
});

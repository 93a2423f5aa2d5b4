// The plugin driven by hand-made RunnerEvents: missing events, odd orders and every engine event
// it knows, without a runner in between.
import {
  Action,
  SignalyardError,
  SignalKind,
  signal,
  type EngineEvent,
  type Outcome,
  type RunnerEvent,
  type Signal,
} from '@signalyard/core';
import { otelPlugin } from '@signalyard/otel';
import { SpanStatusCode } from '@opentelemetry/api';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childrenOf, drive, idOf, named, parentIdOf, textsOf, tracing, treeOf } from './support.js';

const KEY = 'agent:main:main';
const base = { sessionKey: KEY, agentId: 'main' };

function outcome(status: Outcome['status'], action: Action | undefined, sessionKey = KEY): Outcome {
  return { sessionKey, agentId: 'main', action, decidedBy: undefined, status };
}

async function driven(opts: { recordContent?: boolean } = {}) {
  const t = tracing();
  const plugin = otelPlugin({ tracer: t.tracer, ...opts });
  const emit = await drive(plugin);
  const engine = (event: EngineEvent): void => emit({ type: 'engine_event', ...base, event });
  /** signal_received + route_decided (+ turn_start) for a fresh user message. */
  const begin = (s: Signal = signal(SignalKind.UserMessage, 'hello'), turn = true): Signal => {
    emit({ type: 'signal_received', ...base, signal: s });
    emit({ type: 'route_decided', ...base, signal: s, action: Action.Continue });
    if (turn) emit({ type: 'turn_start', ...base });
    return s;
  };
  const end = (s: Signal, status: Outcome['status'] = 'completed'): void => {
    emit({ type: 'turn_end', ...base, status });
    emit({ type: 'outcome', outcome: outcome(status, Action.Continue), signal: s });
  };
  return { t, plugin, emit, engine, begin, end };
}

describe('missing and out-of-order events', () => {
  it('ends a turn and engine spans left open when the outcome arrives', async () => {
    const { t, emit, engine, begin } = await driven();
    const s = begin();
    engine({ type: 'agent_start', agentId: 'triage' });
    engine({ type: 'stage_start', stage: 'plan' });
    emit({ type: 'outcome', outcome: outcome('completed', Action.Continue), signal: s });
    expect(t.openCount()).toBe(0);
    const spans = t.spans();
    expect(treeOf(spans, childrenOf(spans, undefined)[0]!)).toEqual([
      'signalyard.signal',
      [
        [
          'signalyard.turn',
          [
            ['signalyard.crew.agent', []],
            ['signalyard.pipeline.stage', []],
          ],
        ],
      ],
    ]);
  });

  it('dispose ends every span still open, and later events are not recorded', async () => {
    const { t, plugin, emit, engine, begin } = await driven();
    begin();
    engine({ type: 'agent_start', agentId: 'a', group: 'g' });
    engine({ type: 'stage_start', stage: 'plan' });
    emit({
      type: 'signal_received',
      sessionKey: 'agent:main:other',
      agentId: 'main',
      signal: signal(SignalKind.Timer, null),
    });
    expect(t.openCount()).toBe(5);
    await plugin.dispose?.();
    expect(t.openCount()).toBe(0);
    await plugin.dispose?.();
    begin();
    expect(t.startedCount()).toBe(5);
  });

  it('an outcome with no signal span before it (stopped in the queue) is a signal span of its own', async () => {
    const { t, emit } = await driven();
    emit({ type: 'outcome', outcome: outcome('stopped', undefined), signal: signal(SignalKind.UserMessage, 'queued') });
    emit({
      type: 'outcome',
      outcome: {
        ...outcome('failed', undefined),
        error: new SignalyardError({ code: 'CHECKPOINT_LOAD_FAILED', message: 'store down' }),
      },
    });
    const [stopped, failed] = named(t.spans(), 'signalyard.signal');
    expect(stopped?.attributes).toEqual({
      'signalyard.session_key': KEY,
      'signalyard.agent_id': 'main',
      'signalyard.signal_kind': 'user_message',
      'signalyard.status': 'stopped',
    });
    expect(failed?.attributes).toEqual({
      'signalyard.session_key': KEY,
      'signalyard.agent_id': 'main',
      'signalyard.status': 'failed',
      'signalyard.error_code': 'CHECKPOINT_LOAD_FAILED',
    });
    expect(failed?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'store down' });
  });

  it('a failed outcome without an error still has error status', async () => {
    const { t, emit, begin } = await driven();
    const s = begin(undefined, false);
    emit({ type: 'outcome', outcome: outcome('failed', Action.Continue), signal: s });
    expect(named(t.spans(), 'signalyard.signal')[0]?.status).toEqual({ code: SpanStatusCode.ERROR });
  });

  it('a route_decided without signal_received (a listener that joined late) still opens the signal span', async () => {
    const { t, emit } = await driven();
    const s = signal(SignalKind.UserMessage, 'x');
    emit({ type: 'route_decided', ...base, signal: s, action: Action.Continue });
    emit({ type: 'turn_start', ...base });
    emit({ type: 'turn_end', ...base });
    emit({ type: 'outcome', outcome: outcome('completed', Action.Continue), signal: s });
    const spans = t.spans();
    expect(treeOf(spans, childrenOf(spans, undefined)[0]!)).toEqual(['signalyard.signal', [['signalyard.turn', []]]]);
    expect(named(spans, 'signalyard.turn')[0]?.attributes['signalyard.status']).toBeUndefined();
  });

  it('turn, engine and transition events with no signal in flight are ignored; unrouted and warnings record nothing', async () => {
    const { t, emit, engine } = await driven();
    emit({ type: 'turn_start', ...base });
    emit({ type: 'turn_end', ...base, status: 'completed' });
    engine({ type: 'agent_start', agentId: 'a' });
    emit({ type: 'transition_applied', ...base, result: { from: 'a', action: 'go', to: 'b' } });
    emit({ type: 'unrouted', ...base, signal: signal(SignalKind.Timer, null) });
    emit({ type: 'warning', message: 'something' });
    expect(t.startedCount()).toBe(0);
  });

  it('an outcome without its signal ends the session’s current signal', async () => {
    const { t, emit, begin } = await driven();
    begin();
    emit({ type: 'outcome', outcome: outcome('completed', Action.Continue) });
    expect(t.openCount()).toBe(0);
    expect(named(t.spans(), 'signalyard.signal')).toHaveLength(1);
  });

  it('a signal routed again (a checkpoint conflict) gets a turn span per attempt', async () => {
    const { t, emit, begin, end } = await driven();
    const s = begin();
    emit({ type: 'turn_end', ...base, status: 'completed' });
    emit({ type: 'route_decided', ...base, signal: s, action: Action.Continue });
    emit({ type: 'turn_start', ...base });
    end(s);
    const spans = t.spans();
    expect(treeOf(spans, childrenOf(spans, undefined)[0]!)).toEqual([
      'signalyard.signal',
      [
        ['signalyard.turn', []],
        ['signalyard.turn', []],
      ],
    ]);
  });

  it('a turn_start while a turn is open ends the dangling one first', async () => {
    const { t, emit, begin, end } = await driven();
    const s = begin();
    emit({ type: 'turn_start', ...base });
    end(s);
    expect(named(t.spans(), 'signalyard.turn')).toHaveLength(2);
    expect(t.openCount()).toBe(0);
  });

  it('a failed turn has error status', async () => {
    const { t, begin, end } = await driven();
    end(begin(), 'failed');
    const [turn] = named(t.spans(), 'signalyard.turn');
    expect(turn?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('a stopped-in-queue outcome for the same signal object as the one in flight does not end the one in flight', async () => {
    const { t, emit, begin, end } = await driven();
    const s = begin();
    emit({ type: 'outcome', outcome: outcome('stopped', undefined), signal: s });
    expect(t.openCount()).toBe(2);
    end(s);
    const spans = t.spans();
    const roots = childrenOf(spans, undefined);
    expect(roots.map((r) => r.attributes['signalyard.status'])).toEqual(['completed', 'stopped']);
    expect(treeOf(spans, roots[0]!)).toEqual(['signalyard.signal', [['signalyard.turn', []]]]);
  });

  it('a stop routed on arrival with the same signal object as the stop in flight ends its own span', async () => {
    const { t, emit } = await driven();
    const stop = signal(SignalKind.Stop, null);
    emit({ type: 'signal_received', ...base, signal: stop });
    emit({ type: 'route_decided', ...base, signal: stop, action: Action.GracefulStop });
    // The same object dispatched again, routed on arrival while the first is being saved.
    emit({ type: 'signal_received', ...base, signal: stop });
    emit({ type: 'route_decided', ...base, signal: stop, action: Action.GracefulStop });
    emit({ type: 'outcome', outcome: outcome('completed', Action.GracefulStop), signal: stop });
    emit({ type: 'transition_applied', ...base, result: { from: 'a', action: 'go', to: 'b' } });
    emit({ type: 'outcome', outcome: outcome('completed', Action.GracefulStop), signal: stop });
    const spans = t.spans();
    const [first, second] = childrenOf(spans, undefined);
    // The first (applied in its turn) got the transition; the second ended first.
    expect(treeOf(spans, first!)).toEqual(['signalyard.signal', [['signalyard.transition', []]]]);
    expect(treeOf(spans, second!)).toEqual(['signalyard.signal', []]);
    expect(spans.indexOf(second!)).toBeLessThan(spans.indexOf(first!));
  });

  it('a new signal while another of its session is still open leaves that one open until its outcome', async () => {
    const { t, emit, begin, end } = await driven();
    const first = begin();
    const second = begin(signal(SignalKind.UserMessage, 'next'));
    end(second);
    expect(t.openCount()).toBe(2); // the first signal and its turn
    emit({ type: 'outcome', outcome: outcome('completed', Action.Continue), signal: first });
    expect(t.openCount()).toBe(0);
  });
});

describe('many sessions', () => {
  it('keeps pairing events correctly after forgetting thousands of idle sessions', async () => {
    const { t, emit } = await driven();
    const run = (sessionKey: string, turn: boolean): void => {
      const b = { sessionKey, agentId: 'main' };
      const s = signal(SignalKind.UserMessage, sessionKey);
      emit({ type: 'signal_received', ...b, signal: s });
      emit({ type: 'route_decided', ...b, signal: s, action: Action.Continue });
      if (turn) emit({ type: 'turn_start', ...b });
      if (turn) emit({ type: 'turn_end', ...b, status: 'completed' });
      emit({ type: 'outcome', outcome: outcome('completed', Action.Continue, sessionKey), signal: s });
    };
    for (let round = 0; round < 2; round++) for (let i = 0; i < 3000; i++) run(`agent:main:s${i}`, false);
    // One session busy across the sweeps keeps its signal.
    const b = { sessionKey: 'agent:main:busy', agentId: 'main' };
    const busy = signal(SignalKind.UserMessage, 'busy');
    emit({ type: 'signal_received', ...b, signal: busy });
    emit({ type: 'route_decided', ...b, signal: busy, action: Action.Continue });
    for (let i = 0; i < 3000; i++) run(`agent:main:t${i}`, false);
    emit({ type: 'turn_start', ...b });
    emit({ type: 'turn_end', ...b, status: 'completed' });
    emit({ type: 'outcome', outcome: outcome('completed', Action.Continue, 'agent:main:busy'), signal: busy });
    run('agent:main:s1', true);
    expect(t.openCount()).toBe(0);
    const spans = t.spans();
    expect(named(spans, 'signalyard.signal')).toHaveLength(9002);
    const byId = new Map(spans.map((x) => [idOf(x), x]));
    const turnParents = named(spans, 'signalyard.turn').map(
      (turn) => byId.get(parentIdOf(turn) ?? '')?.attributes['signalyard.session_key'],
    );
    expect(turnParents).toEqual(['agent:main:busy', 'agent:main:s1']);
  });
});

describe('signal attributes', () => {
  it('records action, tier and route from the outcome', async () => {
    const { t, emit, begin } = await driven();
    const s = begin(signal(SignalKind.custom('webhook'), {}), false);
    emit({
      type: 'outcome',
      outcome: {
        ...outcome('completed', Action.custom('sync')),
        decidedBy: { tier: 'plugin', route: { kind: SignalKind.custom('webhook'), action: Action.custom('sync') } },
      },
      signal: s,
    });
    expect(named(t.spans(), 'signalyard.signal')[0]?.attributes).toEqual({
      'signalyard.session_key': KEY,
      'signalyard.agent_id': 'main',
      'signalyard.signal_kind': 'custom:webhook',
      'signalyard.action': 'custom(sync)',
      'signalyard.tier': 'plugin', // a route without a name has no signalyard.route
      'signalyard.status': 'completed',
    });
  });

  it('records a transition with its guard', async () => {
    const { t, emit, begin } = await driven();
    const s = begin(undefined, false);
    emit({ type: 'transition_applied', ...base, result: { from: 'a', action: 'go', to: 'b', guard: 'isReady' } });
    emit({ type: 'outcome', outcome: outcome('completed', Action.Continue), signal: s });
    expect(named(t.spans(), 'signalyard.transition')[0]?.attributes).toEqual({
      'signalyard.transition.from': 'a',
      'signalyard.transition.action': 'go',
      'signalyard.transition.to': 'b',
      'signalyard.transition.guard': 'isReady',
    });
  });

  it('with recordContent, records the text of a user message given as { text }, and none for other kinds', async () => {
    const { t, emit, begin } = await driven({ recordContent: true });
    for (const s of [
      signal(SignalKind.UserMessage, { text: 'from payload.text' }),
      signal(SignalKind.UserMessage, { other: 1 }),
      signal(SignalKind.Timer, 'tick'),
    ]) {
      begin(s, false);
      emit({ type: 'outcome', outcome: outcome('completed', Action.Continue), signal: s });
    }
    expect(named(t.spans(), 'signalyard.signal').map((s) => s.attributes['signalyard.content'])).toEqual([
      'from payload.text',
      undefined,
      undefined,
    ]);
  });
});

describe('crew events', () => {
  it('pairs parallel members by group and agent id, with their status; a failed member is an error span', async () => {
    const { t, engine, begin, end } = await driven();
    const s = begin();
    engine({ type: 'agent_start', agentId: 'lead' });
    engine({ type: 'agent_response', agentId: 'lead', content: '[FAN_OUT]' });
    engine({ type: 'parallel_start', group: 'g1', agents: ['x', 'y'] });
    engine({ type: 'agent_start', agentId: 'x', group: 'g1' });
    engine({ type: 'agent_start', agentId: 'y', group: 'g1' });
    engine({ type: 'agent_start', agentId: 'x', group: 'g2' });
    engine({ type: 'agent_response', agentId: 'y', content: 'y says', group: 'g1' });
    engine({ type: 'parallel_member_end', group: 'g1', agentId: 'y', status: 'succeeded', content: 'y says' });
    engine({
      type: 'parallel_member_end',
      group: 'g1',
      agentId: 'x',
      status: 'failed',
      error: new SignalyardError({ code: 'CREW_AGENT_FAILED', message: 'x broke' }),
    });
    engine({ type: 'parallel_member_end', group: 'g2', agentId: 'x', status: 'timed_out' });
    engine({ type: 'parallel_end', group: 'g1', succeeded: ['y'] });
    engine({ type: 'handoff', from: 'lead', to: 'next', via: 'parallel', handoffs: 1 });
    engine({ type: 'agent_start', agentId: 'next' });
    engine({ type: 'agent_response', agentId: 'next', content: 'wait' });
    engine({ type: 'pause', agentId: 'next' });
    end(s, 'paused');

    const spans = t.spans();
    const agents = named(spans, 'signalyard.crew.agent');
    expect(
      agents.map((a) => [
        a.attributes['signalyard.crew.agent_id'],
        a.attributes['signalyard.crew.group'],
        a.attributes['signalyard.crew.member_status'],
        a.status.code,
      ]),
    ).toEqual([
      ['lead', undefined, undefined, SpanStatusCode.UNSET],
      ['x', 'g1', 'failed', SpanStatusCode.ERROR],
      ['y', 'g1', 'succeeded', SpanStatusCode.UNSET],
      ['x', 'g2', 'timed_out', SpanStatusCode.ERROR],
      ['next', undefined, undefined, SpanStatusCode.UNSET],
    ]);
    expect(agents[1]?.status.message).toBe('x broke');
    expect(agents[1]?.events.map((e) => e.name)).toEqual(['exception']);
    expect(agents[4]?.events.map((e) => e.name)).toEqual(['signalyard.crew.pause']);
    // Members and the agents of the main loop are all children of the turn.
    const [turn] = named(spans, 'signalyard.turn');
    expect(agents.every((a) => parentIdOf(a) === idOf(turn!))).toBe(true);
    // The lead's span ended when its group started, so the later handoff is on the turn.
    expect(turn?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['signalyard.crew.parallel_start', { 'signalyard.crew.group': 'g1', 'signalyard.crew.agents': ['x', 'y'] }],
      ['signalyard.crew.parallel_end', { 'signalyard.crew.group': 'g1', 'signalyard.crew.succeeded': ['y'] }],
      [
        'signalyard.crew.handoff',
        {
          'signalyard.crew.from': 'lead',
          'signalyard.crew.to': 'next',
          'signalyard.crew.via': 'parallel',
          'signalyard.crew.handoffs': 1,
        },
      ],
    ]);
    expect(t.openCount()).toBe(0);
  });

  it('parallel_end ends members that never reported (aborted)', async () => {
    const { t, engine, begin } = await driven();
    begin();
    engine({ type: 'agent_start', agentId: 'x', group: 'g' });
    engine({ type: 'agent_start', agentId: 'y', group: 'other' });
    engine({ type: 'parallel_end', group: 'g', succeeded: [] });
    const agents = named(t.spans(), 'signalyard.crew.agent');
    expect(
      agents.map((a) => [a.attributes['signalyard.crew.agent_id'], a.attributes['signalyard.crew.member_status']]),
    ).toEqual([['x', 'aborted']]);
  });

  it('records the MCP server and tool of a call to an MCP tool as mcp.server and mcp.tool', async () => {
    const { t, engine, begin, end } = await driven();
    const s = begin();
    const call = { id: 'c1', name: 'crm_get_order', arguments: {} };
    const mcp = { server: 'crm', tool: 'get_order' };
    engine({ type: 'agent_start', agentId: 'a' });
    engine({ type: 'tool_start', agentId: 'a', call, mcp });
    engine({ type: 'tool_result', agentId: 'a', call, result: 'ok', isError: false, mcp });
    engine({ type: 'tool_start', agentId: 'a', call: { id: 'c2', name: 'local', arguments: {} } });
    engine({ type: 'agent_response', agentId: 'a', content: 'done' });
    engine({ type: 'terminate', agentId: 'a', reason: 'no_next_agent' });
    end(s);
    const [agent] = named(t.spans(), 'signalyard.crew.agent');
    for (const event of agent?.events.slice(0, 2) ?? [])
      expect(event.attributes).toMatchObject({
        'signalyard.crew.tool': 'crm_get_order',
        'mcp.server': 'crm',
        'mcp.tool': 'get_order',
      });
    expect(agent?.events[2]?.attributes?.['mcp.server']).toBeUndefined();
  });

  it('records tool rounds as events of the agent span, with arguments and results only under recordContent', async () => {
    for (const recordContent of [false, true]) {
      const { t, engine, begin, end } = await driven({ recordContent });
      const s = begin();
      const call = { id: 'c1', name: 'lookup', arguments: { order: 'secret-4711' } };
      engine({ type: 'agent_start', agentId: 'a' });
      engine({ type: 'agent_response', agentId: 'a', content: 'let me look', toolCalls: [call] });
      engine({ type: 'tool_start', agentId: 'a', call });
      engine({ type: 'tool_result', agentId: 'a', call, result: { found: 'secret-result' }, isError: false });
      engine({ type: 'tool_start', agentId: 'a', call: { id: 'c2', name: 'fail', arguments: {} } });
      engine({
        type: 'tool_result',
        agentId: 'a',
        call: { id: 'c2', name: 'fail' },
        result: new Error('secret-error'),
        isError: true,
      });
      engine({ type: 'agent_response', agentId: 'a', content: 'found it' });
      engine({ type: 'terminate', agentId: 'a', reason: 'no_next_agent' });
      end(s);
      const [agent] = named(t.spans(), 'signalyard.crew.agent');
      expect(agent?.events.map((e) => e.name)).toEqual([
        'signalyard.crew.tool_calls',
        'signalyard.crew.tool_start',
        'signalyard.crew.tool_result',
        'signalyard.crew.tool_start',
        'signalyard.crew.tool_result',
        'signalyard.crew.terminate',
      ]);
      expect(agent?.events[0]?.attributes?.['signalyard.crew.tools']).toEqual(['lookup']);
      expect(agent?.events[2]?.attributes).toMatchObject({
        'signalyard.crew.tool': 'lookup',
        'signalyard.crew.tool_call_id': 'c1',
        'signalyard.crew.tool_error': false,
      });
      expect(agent?.events[4]?.attributes).toMatchObject({
        'signalyard.crew.tool': 'fail',
        'signalyard.crew.tool_error': true,
      });
      const texts = textsOf(agent!).join('\n');
      for (const secret of ['let me look', 'secret-4711', 'secret-result', 'secret-error', 'found it'])
        expect(texts.includes(secret)).toBe(recordContent);
    }
  });

  it('a new agent_start of the main loop ends the previous agent; a handoff from another agent goes to the turn', async () => {
    const { t, engine, begin, end } = await driven();
    const s = begin();
    engine({ type: 'agent_start', agentId: 'a' });
    engine({ type: 'agent_start', agentId: 'b' });
    engine({ type: 'handoff', from: 'a', to: 'b', via: 'fallback', handoffs: 1 });
    engine({ type: 'terminate', agentId: 'zzz', reason: 'max_rounds' });
    end(s);
    const spans = t.spans();
    expect(named(spans, 'signalyard.crew.agent').map((a) => a.events.length)).toEqual([0, 0]);
    expect(named(spans, 'signalyard.turn')[0]?.events.map((e) => e.name)).toEqual([
      'signalyard.crew.handoff',
      'signalyard.crew.terminate',
    ]);
  });

  it('ignores engine events it does not know or whose fields are malformed', async () => {
    const { t, engine, begin, end } = await driven();
    const s = begin();
    for (const event of [
      { type: 'agent_start' },
      { type: 'agent_start', agentId: 7 },
      { type: 'agent_response', agentId: 'ghost', content: 'x' },
      { type: 'agent_response', agentId: 'ghost', content: 'x', group: 'g' },
      { type: 'tool_start', agentId: 'ghost', call: null },
      { type: 'parallel_member_end', agentId: 'ghost', status: 'failed' },
      { type: 'parallel_member_end', group: 'g', agentId: 'ghost', status: 'failed' },
      { type: 'stage_start' },
      { type: 'stage_end', stage: 'never-started', failed: false, next: 'end', output: {} },
      { type: 'stage_end' },
      { type: 'parallel_end' },
      { type: 'something_else', payload: 1 },
    ] as EngineEvent[]) {
      engine(event);
    }
    end(s);
    expect(
      t
        .spans()
        .map((x) => x.name)
        .sort(),
    ).toEqual(['signalyard.signal', 'signalyard.turn']);
  });

  it('with recordContent, content without a JSON form is recorded as text, never thrown', async () => {
    const { t, engine, begin, end } = await driven({ recordContent: true });
    const s = begin();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    engine({ type: 'agent_start', agentId: 'a' });
    engine({ type: 'tool_start', agentId: 'a', call: { id: 'c', name: 't', arguments: cyclic } });
    engine({ type: 'tool_result', agentId: 'a', call: { id: 'c', name: 't' }, result: 10n, isError: false });
    engine({ type: 'tool_result', agentId: 'a', call: { id: 'c', name: 't' }, result: undefined, isError: false });
    end(s);
    const [agent] = named(t.spans(), 'signalyard.crew.agent');
    expect(agent?.events.map((e) => e.attributes?.['signalyard.content'])).toEqual([
      '[object Object]',
      '10',
      'undefined',
    ]);
  });
});

describe('pipeline events', () => {
  it('pairs interleaved DAG stages by name; a stage started again ends the dangling one', async () => {
    const { t, engine, begin, end } = await driven();
    const s = begin();
    engine({ type: 'stage_start', stage: 'a' });
    engine({ type: 'stage_start', stage: 'b' });
    engine({ type: 'stage_end', stage: 'b', output: {}, failed: false, next: 'end' });
    engine({ type: 'stage_start', stage: 'a' });
    engine({ type: 'stage_end', stage: 'a', output: {}, failed: true, next: 'end' });
    engine({ type: 'interrupt', interrupt: null });
    end(s);
    const stages = named(t.spans(), 'signalyard.pipeline.stage');
    expect(
      stages.map((x) => [
        x.attributes['signalyard.pipeline.stage'],
        x.attributes['signalyard.pipeline.failed'],
        x.status.code,
      ]),
    ).toEqual([
      ['a', undefined, SpanStatusCode.UNSET],
      ['b', false, SpanStatusCode.UNSET],
      ['a', true, SpanStatusCode.ERROR],
    ]);
    expect(named(t.spans(), 'signalyard.turn')[0]?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['signalyard.pipeline.interrupt', {}],
    ]);
  });

  it('engine events outside a turn hang under the signal span', async () => {
    const { t, engine, begin, emit } = await driven();
    const s = begin(undefined, false);
    engine({ type: 'stage_start', stage: 'a' });
    engine({ type: 'stage_end', stage: 'a', output: {}, failed: false, next: 'end' });
    emit({ type: 'outcome', outcome: outcome('completed', Action.Continue), signal: s });
    const spans = t.spans();
    expect(treeOf(spans, childrenOf(spans, undefined)[0]!)).toEqual([
      'signalyard.signal',
      [['signalyard.pipeline.stage', []]],
    ]);
  });
});

describe('invariants', () => {
  /** One signal's events, in the order a Runner emits them. */
  const signalEvents = (
    sessionKey: string,
    index: number,
    shape: { turn: boolean; stages: number; transition: boolean; status: Outcome['status'] },
  ): RunnerEvent[] => {
    const b = { sessionKey, agentId: 'main' };
    const s = signal(SignalKind.UserMessage, `${sessionKey}#${index}`);
    const out: RunnerEvent[] = [
      { type: 'signal_received', ...b, signal: s },
      { type: 'route_decided', ...b, signal: s, action: Action.Continue },
    ];
    if (shape.turn) {
      out.push({ type: 'turn_start', ...b });
      for (let i = 0; i < shape.stages; i++) {
        out.push({ type: 'engine_event', ...b, event: { type: 'stage_start', stage: `${sessionKey}/${i}` } });
        out.push({
          type: 'engine_event',
          ...b,
          event: { type: 'stage_end', stage: `${sessionKey}/${i}`, output: {}, failed: false, next: 'end' },
        });
      }
      out.push({ type: 'turn_end', ...b, status: shape.status });
    }
    if (shape.transition)
      out.push({ type: 'transition_applied', ...b, result: { from: 'x', action: sessionKey, to: 'y' } });
    out.push({ type: 'outcome', outcome: outcome(shape.status, Action.Continue, sessionKey), signal: s });
    return out;
  };
  const shapeArb = fc.record({
    turn: fc.boolean(),
    stages: fc.nat({ max: 3 }),
    transition: fc.boolean(),
    status: fc.constantFrom<Outcome['status']>('completed', 'failed', 'stopped', 'paused', 'rejected'),
  });
  // Per session, its signals one after another; sessions interleaved in any order.
  const runArb = fc
    .array(fc.array(shapeArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 })
    .chain((sessions) => {
      const queues = sessions.map((shapes, i) =>
        shapes.flatMap((shape, j) => signalEvents(`agent:main:s${i}`, j, shape)),
      );
      const total = queues.reduce((n, q) => n + q.length, 0);
      return fc.array(fc.nat({ max: sessions.length - 1 }), { minLength: total, maxLength: total }).map((picks) => {
        const cursors = queues.map(() => 0);
        const events: RunnerEvent[] = [];
        for (const pick of picks) {
          // The picked session, or the next one with events left.
          for (let k = 0; k < queues.length; k++) {
            const q = (pick + k) % queues.length;
            if ((cursors[q] as number) < (queues[q] as RunnerEvent[]).length) {
              events.push((queues[q] as RunnerEvent[])[(cursors[q] as number)++] as RunnerEvent);
              break;
            }
          }
        }
        return { signals: sessions.reduce((n, s) => n + s.length, 0), events };
      });
    });

  it('interleaved sessions: one span per signal, every child under a signal of its own session, all ended', async () => {
    await fc.assert(
      fc.asyncProperty(runArb, async ({ signals, events }) => {
        const t = tracing();
        const emit = await drive(otelPlugin({ tracer: t.tracer }));
        for (const event of events) emit(event);
        expect(t.openCount()).toBe(0);
        const spans = t.spans();
        const roots = childrenOf(spans, undefined);
        expect(roots).toHaveLength(signals);
        expect(roots.every((r) => r.name === 'signalyard.signal')).toBe(true);
        const rootOf = (id: string | undefined): (typeof roots)[number] | undefined => {
          let span = spans.find((x) => idOf(x) === id);
          while (span !== undefined) {
            const parent = parentIdOf(span);
            if (parent === undefined) return span;
            span = spans.find((x) => idOf(x) === parent);
          }
          return undefined;
        };
        for (const span of spans) {
          if (span.name === 'signalyard.turn') {
            expect(parentIdOf(span)).toBe(idOf(rootOf(idOf(span))!));
            continue;
          }
          const key =
            span.attributes['signalyard.session_key'] ??
            span.attributes['signalyard.transition.action'] ??
            String(span.attributes['signalyard.pipeline.stage']).split('/')[0];
          expect(rootOf(idOf(span))?.attributes['signalyard.session_key']).toBe(key);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('never throws and ends every span after dispose, whatever the events', async () => {
    const sessions = ['agent:main:a', 'agent:main:b'];
    const signals = [
      signal(SignalKind.UserMessage, 'u'),
      signal(SignalKind.Stop, null),
      signal(SignalKind.Timer, null),
    ];
    const engineEvents: EngineEvent[] = [
      { type: 'agent_start', agentId: 'a' },
      { type: 'agent_start', agentId: 'a', group: 'g' },
      { type: 'agent_response', agentId: 'a', content: 'x' },
      { type: 'agent_response', agentId: 'a', content: 'x', group: 'g' },
      { type: 'handoff', from: 'a', to: 'b', via: 'signal', handoffs: 1 },
      { type: 'parallel_member_end', group: 'g', agentId: 'a', status: 'succeeded' },
      { type: 'parallel_end', group: 'g', succeeded: [] },
      { type: 'stage_start', stage: 's' },
      { type: 'stage_end', stage: 's', output: {}, failed: false, next: 'end' },
    ];
    const eventArb: fc.Arbitrary<RunnerEvent> = fc
      .tuple(
        fc.constantFrom(...sessions),
        fc.constantFrom(...signals),
        fc.nat({ max: 8 }),
        fc.constantFrom(...engineEvents),
        fc.boolean(),
      )
      .map(([sessionKey, s, which, event, withSignal]): RunnerEvent => {
        const b = { sessionKey, agentId: 'main' };
        switch (which) {
          case 0:
            return { type: 'signal_received', ...b, signal: s };
          case 1:
            return {
              type: 'route_decided',
              ...b,
              signal: s,
              action: s.kind === 'stop' ? Action.ForceStop : Action.Continue,
            };
          case 2:
            return { type: 'turn_start', ...b };
          case 3:
            return { type: 'turn_end', ...b, status: 'completed' };
          case 4:
          case 5:
            return { type: 'engine_event', ...b, event };
          case 6:
            return { type: 'transition_applied', ...b, result: { from: 'a', action: 'b', to: 'c' } };
          default:
            return withSignal
              ? {
                  type: 'outcome',
                  outcome: outcome(
                    s.kind === 'timer' ? 'stopped' : 'completed',
                    s.kind === 'stop' ? Action.ForceStop : undefined,
                    sessionKey,
                  ),
                  signal: s,
                }
              : { type: 'outcome', outcome: outcome('completed', Action.Continue, sessionKey) };
        }
      });
    await fc.assert(
      fc.asyncProperty(fc.array(eventArb, { maxLength: 60 }), async (events) => {
        const t = tracing();
        const plugin = otelPlugin({ tracer: t.tracer });
        const emit = await drive(plugin);
        for (const event of events) expect(() => emit(event)).not.toThrow();
        await plugin.dispose?.();
        expect(t.openCount()).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});

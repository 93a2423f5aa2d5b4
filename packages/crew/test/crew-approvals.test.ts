import { describe, expect, it } from 'vitest';
import type { ChatMessage, PendingApproval, Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, type CrewEvent, type CrewResponse, type CrewState } from '@signalyard/crew';
import { collect, endOf, runError, trace } from './crew-support.js';
import { POLICY, approvalCrew, calls, eventsOf, recordingTools, roundTrip } from './crew-support-approvals.js';

/** Three calls: lookup (allowed), refund 250 (asked), wipe (denied). */
const MIXED = calls(
  'working on it',
  ['c1', 'lookup', { word: 'x' }],
  ['c2', 'refund', { amount: 250 }],
  ['c3', 'wipe', {}],
);

function setup(script: Record<string, unknown[]>, policy = POLICY, settings = {}) {
  const { tools, runs } = recordingTools();
  const model = scriptedModel(script as never);
  const executor = new CrewExecutor({ crew: approvalCrew(policy, settings), model, tools });
  return { executor, model, runs, tools };
}

async function paused(): Promise<{
  executor: CrewExecutor;
  model: ReturnType<typeof scriptedModel>;
  runs: string[];
  tools: Tool[];
  events: CrewEvent[];
  response: CrewResponse;
}> {
  const s = setup({ clerk: [MIXED, 'Refunded. [DONE]'] });
  const events = await collect(s.executor, 'refund me');
  return { ...s, events, response: endOf(events) };
}

describe('CrewExecutor approvals: deciding each call', () => {
  it('a denied call is answered "denied: <reason>" (isError) and its tool never runs', async () => {
    const { executor, runs } = setup({ clerk: [calls('wiping', ['w1', 'wipe', {}]), 'ok [DONE]'] });
    const events = await collect(executor, 'wipe it');
    const response = endOf(events);
    expect(runs).toEqual([]);
    expect(response.state.history).toContainEqual({ role: 'tool', content: 'denied: never', toolCallId: 'w1' });
    expect(eventsOf(events, 'tool_result')).toEqual([
      {
        type: 'tool_result',
        agentId: 'clerk',
        call: { id: 'w1', name: 'wipe', arguments: {} },
        result: 'denied: never',
        isError: true,
      },
    ]);
    expect(eventsOf(events, 'tool_start')).toEqual([]);
    expect(response.reason).toBe('terminated_by_signal');
  });

  it('a denial without a reason is the bare word "denied"', async () => {
    const { executor } = setup(
      { clerk: [calls('wiping', ['w1', 'wipe', {}]), 'ok [DONE]'] },
      {
        rules: [{ tool: 'wipe', decision: 'deny' }],
      },
    );
    const response = await executor.execute('wipe it');
    expect(response.state.history[2]).toEqual({ role: 'tool', content: 'denied', toolCallId: 'w1' });
  });

  it('allowed calls run as before; a crew without a policy or needsApproval never pauses', async () => {
    const { executor, runs } = setup({ clerk: [calls('x', ['a', 'refund', { amount: 5000 }]), 'done [DONE]'] }, {});
    const response = await executor.execute('go');
    expect(runs).toEqual(['refund:{"amount":5000}']);
    expect(response.reason).toBe('terminated_by_signal');
    expect(response.state.approvals).toBeUndefined();
  });

  it("a tool's needsApproval asks when no rule matches", async () => {
    const { tools, runs } = recordingTools();
    const guarded = tools.map((t) =>
      t.name === 'lookup'
        ? { ...t, needsApproval: (args: unknown) => (args as { word: string }).word === 'secret' }
        : t,
    );
    const model = scriptedModel({
      clerk: [calls('x', ['a', 'lookup', { word: 'public' }], ['b', 'lookup', { word: 'secret' }])],
    });
    const response = await new CrewExecutor({ crew: approvalCrew(), model, tools: guarded }).execute('go');
    expect(response.reason).toBe('awaiting_approval');
    expect(response.pendingApprovals?.map((p) => p.toolCallId)).toEqual(['b']);
    expect(runs).toEqual(['lookup:{"word":"public"}']);
  });

  it('a needsApproval that throws denies the call, saying why', async () => {
    const { tools, runs } = recordingTools();
    const broken = tools.map((t) =>
      t.name === 'lookup'
        ? {
            ...t,
            needsApproval: () => {
              throw new Error('policy service down');
            },
          }
        : t,
    );
    const model = scriptedModel({ clerk: [calls('x', ['a', 'lookup', {}]), 'ok [DONE]'] });
    const response = await new CrewExecutor({ crew: approvalCrew(), model, tools: broken }).execute('go');
    expect(runs).toEqual([]);
    expect(response.state.history[2]?.content).toBe('denied: the approval check failed: policy service down');
  });
});

describe('CrewExecutor approvals: pausing', () => {
  it('holds the asked call, runs allowed siblings now, answers denied ones, and ends awaiting_approval', async () => {
    const { runs, events, response, model } = await paused();
    expect(runs).toEqual(['lookup:{"word":"x"}']);
    expect(model.calls).toHaveLength(1);
    expect(response).toMatchObject({
      agentId: 'clerk',
      content: 'working on it',
      reason: 'awaiting_approval',
      isTerminal: false,
      handoffs: 0,
    });
    const pending = response.pendingApprovals as readonly PendingApproval[];
    expect(pending).toEqual([
      {
        id: 'ap-1',
        toolCallId: 'c2',
        toolName: 'refund',
        arguments: { amount: 250 },
        agentId: 'clerk',
        reason: 'large refund',
        rule: 0,
        requestedAt: expect.any(String) as string,
      },
    ]);
    expect(new Date(pending[0]?.requestedAt ?? '').toISOString()).toBe(pending[0]?.requestedAt);
    expect(trace(events)).toEqual([
      'agent_start:clerk',
      'agent_response:clerk',
      'approval_decided',
      'approval_decided',
      'approval_decided',
      'tool_result:wipe',
      'tool_start:lookup',
      'tool_result:lookup',
      'approval_requested',
      'end',
    ]);
    expect(eventsOf(events, 'approval_requested')).toEqual([
      { type: 'approval_requested', agentId: 'clerk', approvals: pending },
    ]);
    // Each call's decision, in call order, with the deciding rule (POLICY's rules have no names).
    expect(eventsOf(events, 'approval_decided').map((e) => [e.toolName, e.decision, e.rule, e.reason])).toEqual([
      ['lookup', 'allow', undefined, undefined],
      ['refund', 'ask', 0, 'large refund'],
      ['wipe', 'deny', 1, 'never'],
    ]);
  });

  it('keeps the held reply and its results out of the history until the batch completes', async () => {
    const { response } = await paused();
    expect(response.state.history).toEqual([{ role: 'user', content: 'refund me' }]);
    const batch = response.state.approvals?.batch;
    expect(batch).toMatchObject({
      agentId: 'clerk',
      message: { role: 'assistant', content: 'working on it', name: 'clerk' },
      at: 1,
      run: { modelCalls: 1, handoffs: 0, toolRounds: 1, path: ['clerk'] },
    });
    expect(batch?.calls.map((c) => c.status)).toEqual(['done', 'held', 'done']);
    expect(batch?.calls[0]).toEqual({ status: 'done', content: 'lookup ok', isError: false });
    expect(batch?.calls[2]).toEqual({ status: 'done', content: 'denied: never', isError: true });
  });

  it('execute() and executeStream() end alike', async () => {
    const a = setup({ clerk: [MIXED] });
    const b = setup({ clerk: [MIXED] });
    const streamed = endOf(await collect(a.executor, 'refund me'));
    const plain = await b.executor.execute('refund me');
    const strip = (r: CrewResponse) =>
      roundTrip({
        ...r,
        pendingApprovals: r.pendingApprovals?.map((p) => ({ ...p, requestedAt: '' })),
        state: undefined,
      });
    expect(strip(plain)).toEqual(strip(streamed));
  });

  it('the state is plain JSON', async () => {
    const { response } = await paused();
    expect(roundTrip(response.state)).toEqual(response.state);
  });
});

describe('CrewExecutor approvals: resuming', () => {
  it('an approved call runs once; the reply and every result join the history as one block; the turn goes on', async () => {
    const { executor, runs, model, response } = await paused();
    const events = await collect(executor, 'ignored while pending', {
      state: roundTrip(response.state),
      approvals: [{ id: 'ap-1', approved: true }],
    });
    const done = endOf(events);
    expect(runs).toEqual(['lookup:{"word":"x"}', 'refund:{"amount":250}']);
    expect(done.reason).toBe('terminated_by_signal');
    const block: ChatMessage[] = [
      { role: 'user', content: 'refund me' },
      { role: 'assistant', content: 'working on it', name: 'clerk', toolCalls: MIXED.toolCalls },
      { role: 'tool', content: 'lookup ok', toolCallId: 'c1' },
      { role: 'tool', content: 'refund ok', toolCallId: 'c2' },
      { role: 'tool', content: 'denied: never', toolCallId: 'c3' },
    ];
    expect(done.state.history).toEqual([...block, { role: 'assistant', content: 'Refunded. [DONE]', name: 'clerk' }]);
    expect(model.calls[1]?.messages).toEqual(block);
    expect(done.state.approvals).toEqual({ issued: 1, decided: ['ap-1'] });
    expect(trace(events)).toEqual([
      'approval_resolved',
      'tool_start:refund',
      'tool_result:refund',
      'agent_response:clerk',
      'terminate:terminated_by_signal',
      'end',
    ]);
    expect(eventsOf(events, 'approval_resolved')).toEqual([
      { type: 'approval_resolved', agentId: 'clerk', id: 'ap-1', approved: true },
    ]);
  });

  it('a denied call is answered "denied: <the decider\'s reason>" and never runs', async () => {
    const { executor, runs, response } = await paused();
    const events = await collect(executor, '', {
      state: response.state,
      approvals: [{ id: 'ap-1', approved: false, reason: 'too much' }],
    });
    const done = endOf(events);
    expect(runs).toEqual(['lookup:{"word":"x"}']);
    expect(done.state.history[3]).toEqual({ role: 'tool', content: 'denied: too much', toolCallId: 'c2' });
    expect(eventsOf(events, 'approval_resolved')).toEqual([
      { type: 'approval_resolved', agentId: 'clerk', id: 'ap-1', approved: false, reason: 'too much' },
    ]);
    expect(eventsOf(events, 'tool_result')).toMatchObject([
      { call: { id: 'c2' }, result: 'denied: too much', isError: true },
    ]);
  });

  it('partial decisions are applied and the run stays awaiting_approval with the rest (not requested again)', async () => {
    const { executor, runs } = setup({
      clerk: [calls('two', ['a', 'refund', { amount: 200 }], ['b', 'refund', { amount: 300 }]), 'Both done. [DONE]'],
    });
    const first = await executor.execute('refund twice');
    expect(first.pendingApprovals?.map((p) => p.id)).toEqual(['ap-1', 'ap-2']);
    const events = await collect(executor, '', { state: first.state, approvals: [{ id: 'ap-2', approved: true }] });
    const second = endOf(events);
    expect(runs).toEqual(['refund:{"amount":300}']);
    expect(second.reason).toBe('awaiting_approval');
    expect(second.pendingApprovals?.map((p) => p.id)).toEqual(['ap-1']);
    expect(eventsOf(events, 'approval_requested')).toEqual([]);
    expect(second.state.history).toEqual([{ role: 'user', content: 'refund twice' }]);
    const third = await executor.execute('', { state: second.state, approvals: [{ id: 'ap-1', approved: true }] });
    expect(runs).toEqual(['refund:{"amount":300}', 'refund:{"amount":200}']);
    expect(third.reason).toBe('terminated_by_signal');
    expect(third.state.history.slice(2, 4)).toEqual([
      { role: 'tool', content: 'refund ok', toolCallId: 'a' },
      { role: 'tool', content: 'refund ok', toolCallId: 'b' },
    ]);
  });

  it('a resume without decisions changes nothing and stays awaiting_approval; input is not appended', async () => {
    const { executor, runs, response, model } = await paused();
    const again = await executor.execute('hello?', { state: response.state });
    expect(again.reason).toBe('awaiting_approval');
    expect(again.state.history).toEqual([{ role: 'user', content: 'refund me' }]);
    expect(again.pendingApprovals).toEqual(response.pendingApprovals);
    expect(runs).toEqual(['lookup:{"word":"x"}']);
    expect(model.calls).toHaveLength(1);
  });

  it('user messages added to the history while pending are moved after the block', async () => {
    const { executor, response } = await paused();
    const state: CrewState = {
      ...response.state,
      history: [...response.state.history, { role: 'user', content: 'are you there?' }],
    };
    const done = await executor.execute('', { state, approvals: [{ id: 'ap-1', approved: true }] });
    expect(done.state.history.map((m) => `${m.role}:${m.content}`)).toEqual([
      'user:refund me',
      'assistant:working on it',
      'tool:lookup ok',
      'tool:refund ok',
      'tool:denied: never',
      'user:are you there?',
      'assistant:Refunded. [DONE]',
    ]);
  });

  it('ids are assigned by the executor, unique across batches even when the model reuses its call ids', async () => {
    const { executor } = setup({
      clerk: [
        calls('one', ['c1', 'refund', { amount: 500 }]),
        calls('again', ['c1', 'refund', { amount: 600 }]),
        'ok [DONE]',
      ],
    });
    const first = await executor.execute('go');
    const second = await executor.execute('', {
      state: roundTrip(first.state),
      approvals: [{ id: 'ap-1', approved: true }],
    });
    expect(second.pendingApprovals?.map((p) => [p.id, p.toolCallId])).toEqual([['ap-2', 'c1']]);
    const third = await executor.execute('', {
      state: roundTrip(second.state),
      approvals: [{ id: 'ap-2', approved: true }],
    });
    expect(third.state.approvals).toEqual({ issued: 2, decided: ['ap-1', 'ap-2'] });
  });

  it('a new executor resumes a state saved as JSON identically', async () => {
    const { response, runs, tools, model } = await paused();
    const fresh = new CrewExecutor({ crew: approvalCrew(POLICY), model, tools });
    const done = await fresh.execute('', {
      state: roundTrip(response.state),
      approvals: [{ id: 'ap-1', approved: true }],
    });
    expect(done.reason).toBe('terminated_by_signal');
    expect(runs).toEqual(['lookup:{"word":"x"}', 'refund:{"amount":250}']);
  });
});

describe('CrewExecutor approvals: unknown and duplicate decisions', () => {
  it('an unknown id fails with CREW_APPROVAL_UNKNOWN and nothing of the batch is applied', async () => {
    const { executor, runs, response, model } = await paused();
    const events = await collect(executor, '', {
      state: response.state,
      approvals: [
        { id: 'ap-1', approved: true },
        { id: 'ap-9', approved: true },
      ],
    });
    const last = events.at(-1);
    expect(last?.type).toBe('error');
    expect(events).toHaveLength(1);
    const error = (last as Extract<CrewEvent, { type: 'error' }>).error;
    expect(error.code).toBe('CREW_APPROVAL_UNKNOWN');
    expect(error.message).toContain('"ap-9"');
    expect(error.message).toContain('"ap-1"');
    expect(error.state).toEqual(response.state);
    expect(runs).toEqual(['lookup:{"word":"x"}']);
    expect(model.calls).toHaveLength(1);
    const rejected = await runError(
      executor.execute('', { state: response.state, approvals: [{ id: 'nope', approved: false }] }),
    );
    expect(rejected.code).toBe('CREW_APPROVAL_UNKNOWN');
  });

  it('a decision on a state with nothing pending and an id never issued is unknown', async () => {
    const { executor } = setup({ clerk: ['hi [DONE]'] });
    const error = await runError(executor.execute('hi', { approvals: [{ id: 'ap-1', approved: true }] }));
    expect(error.code).toBe('CREW_APPROVAL_UNKNOWN');
    expect(error.message).toContain('no approval is pending');
  });

  it('a second decision for a decided id is ignored with a warning — in the same list or a later run', async () => {
    const { executor, runs, response } = await paused();
    const events = await collect(executor, '', {
      state: response.state,
      approvals: [
        { id: 'ap-1', approved: true },
        { id: 'ap-1', approved: false, reason: 'changed my mind' },
      ],
    });
    const done = endOf(events);
    expect(runs.filter((r) => r.startsWith('refund'))).toHaveLength(1);
    expect(eventsOf(events, 'approval_resolved')).toHaveLength(1);
    expect(eventsOf(events, 'warning')).toEqual([
      { type: 'warning', agentId: 'clerk', message: expect.stringContaining('"ap-1" was already decided') as string },
    ]);
    const later = await collect(executor, 'next', { state: done.state, approvals: [{ id: 'ap-1', approved: true }] });
    expect(eventsOf(later, 'warning')).toHaveLength(1);
    expect(runs.filter((r) => r.startsWith('refund'))).toHaveLength(1);
  });

  it('remembers the last 256 decided ids; an older one is unknown', async () => {
    const { executor } = setup({ clerk: ['hi [DONE]'] });
    const decided = Array.from({ length: 256 }, (_, i) => `ap-${i + 2}`);
    const state: CrewState = { history: [], approvals: { issued: 257, decided } };
    const events = await collect(executor, 'hi', { state, approvals: [{ id: 'ap-2', approved: true }] });
    expect(eventsOf(events, 'warning')).toHaveLength(1);
    expect((await runError(executor.execute('hi', { state, approvals: [{ id: 'ap-1', approved: true }] }))).code).toBe(
      'CREW_APPROVAL_UNKNOWN',
    );
  });

  it('keeps at most 256 decided ids, forgetting the oldest', async () => {
    const many = Array.from(
      { length: 3 },
      (_, i) => [`c${i}`, 'refund', { amount: 1000 + i }] as [string, string, unknown],
    );
    const { executor } = setup({ clerk: [calls('many', ...many), 'ok [DONE]'] });
    const first = await executor.execute('go');
    const decided = Array.from({ length: 255 }, (_, i) => `old-${i}`);
    const state = { ...first.state, approvals: { ...first.state.approvals, issued: 3, decided } };
    const done = await executor.execute('', {
      state: state,
      approvals: (first.pendingApprovals ?? []).map((p) => ({ id: p.id, approved: true })),
    });
    expect(done.state.approvals?.decided).toHaveLength(256);
    expect(done.state.approvals?.decided.slice(0, 2)).toEqual(['old-2', 'old-3']);
    expect(done.state.approvals?.decided.slice(-3)).toEqual(['ap-1', 'ap-2', 'ap-3']);
  });
});

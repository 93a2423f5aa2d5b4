// crewEngine with tool approvals: a crew pauses on a held call, the Runner saves its pending
// approvals, approve() (from this runner or a new one over the same store) resumes the crew, and
// the approved tool runs once — claimed by a commit before it runs.
import {
  MemoryCheckpointStore,
  SignalKind,
  signal,
  type ChatResponse,
  type CheckpointStore,
  type Tool,
} from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import type { CrewConfigInput, CrewResponse } from '@signalyard/crew';
import { createRunner, crewEngine } from 'signalyard';
import { describe, expect, it } from 'vitest';

const crew: CrewConfigInput = {
  entryPoint: 'clerk',
  agents: [{ id: 'clerk', tools: ['refund', 'lookup'] }],
  routing: { signals: { clerk: [{ signal: '[DONE]', target: '' }] } },
  approvals: {
    rules: [{ tool: 'refund', when: [{ path: 'amount', gt: 100 }], decision: 'ask', reason: 'large refund' }],
  },
};

const KEY = 'agent:desk:main';
const reply = (content: string, ...calls: [string, string, unknown][]): ChatResponse => ({
  content,
  toolCalls: calls.map(([id, name, args]) => ({ id, name, arguments: args })),
});

/** Tools that record each run, and what the store held for the session when it ran. */
function tools(store: CheckpointStore): { tools: Tool[]; runs: string[]; claimed: unknown[] } {
  const runs: string[] = [];
  const claimed: unknown[] = [];
  const tool = (name: string): Tool => ({
    name,
    parameters: { type: 'object' },
    execute: async (args) => {
      runs.push(`${name}:${JSON.stringify(args)}`);
      claimed.push((await store.load(KEY))?.data);
      return `${name} ok`;
    },
  });
  return { tools: [tool('refund'), tool('lookup')], runs, claimed };
}

function desk(store: CheckpointStore, script: readonly (ChatResponse | string)[]) {
  const t = tools(store);
  const model = scriptedModel({ clerk: script });
  const runner = createRunner({ store, agents: [{ id: 'desk', engine: crewEngine(crew, { model, tools: t.tools }) }] });
  return { runner, ...t, model };
}

const say = (text: string) => signal(SignalKind.UserMessage, text);

describe('crewEngine with approvals', () => {
  it('pauses on a held call (allowed siblings run now), then approve() runs it once after a claim commit', async () => {
    const store = new MemoryCheckpointStore();
    const { runner, runs, claimed } = desk(store, [
      reply('Checking.', ['m1', 'lookup', { order: 7 }], ['m1', 'refund', { amount: 250 }]),
      'Refunded. [DONE]',
    ]);
    const asked = await runner.dispatch(KEY, say('refund order 7'));
    expect(asked.status).toBe('paused');
    expect(asked.pendingApprovals).toHaveLength(1);
    const [pending] = asked.pendingApprovals!;
    expect(pending).toMatchObject({
      toolName: 'refund',
      arguments: { amount: 250 },
      agentId: 'clerk',
      reason: 'large refund',
    });
    expect(runs).toEqual(['lookup:{"order":7}']);
    const view = await runner.session(KEY);
    expect(view?.pendingApprovals).toEqual(asked.pendingApprovals);
    // The held reply is not in the history yet; the transcript shows it with the pending call.
    expect(view?.history.map((m) => m.role)).toEqual(['user']);
    const transcript = await runner.transcript(KEY);
    expect(transcript.at(-1)).toMatchObject({ type: 'tool', status: 'pending_approval', approvalId: pending!.id });

    const done = await runner.approve(KEY, [{ id: pending!.id, approved: true }], { by: 'ops' });
    expect(done.status).toBe('completed');
    expect((done.output as CrewResponse).reason).toBe('terminated_by_signal');
    expect(runs).toEqual(['lookup:{"order":7}', 'refund:{"amount":250}']);
    // The refund ran after the session was saved with its call claimed.
    expect(JSON.stringify(claimed[1])).toContain('"started"');
    const after = await runner.session(KEY);
    expect(after?.pendingApprovals).toEqual([]);
    // One block: the reply with its calls, then both results, then the final answer.
    expect(after?.history.map((m) => [m.role, m.toolCallId ?? m.toolCalls?.length ?? ''])).toEqual([
      ['user', ''],
      ['assistant', 2],
      ['tool', 'm1'],
      ['tool', 'm1'],
      ['assistant', ''],
    ]);
    expect(await runner.approve(KEY, [{ id: pending!.id, approved: true }])).toMatchObject({ status: 'rejected' });
    expect(runs).toHaveLength(2);
    await runner.close();
  });

  it('after approve(), a call of the next reply that needs no approval is committed as started before it runs', async () => {
    const store = new MemoryCheckpointStore();
    const { runner, runs, claimed } = desk(store, [
      reply('Refunding.', ['r1', 'refund', { amount: 250 }]),
      reply('Checking.', ['l1', 'lookup', { order: 7 }]),
      'Refunded and checked. [DONE]',
    ]);
    const asked = await runner.dispatch(KEY, say('refund order 7'));
    const done = await runner.approve(KEY, [{ id: asked.pendingApprovals![0]!.id, approved: true }]);
    expect(done.status).toBe('completed');
    expect(runs).toEqual(['refund:{"amount":250}', 'lookup:{"order":7}']);
    // When the lookup ran, the store already held it claimed (the reply held in the batch, the call started).
    const atLookup = JSON.stringify(claimed[1]);
    expect(atLookup).toContain('"started"');
    expect(atLookup).toContain('"l1"');
    expect((await runner.session(KEY))?.history.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    await runner.close();
  });

  it('a denial is told to the model as "denied: <reason>" and the tool never runs; a new runner over the store can decide', async () => {
    const store = new MemoryCheckpointStore();
    const first = desk(store, [reply('Refunding.', ['r', 'refund', { amount: 900 }])]);
    const asked = await first.runner.dispatch(KEY, say('refund 900'));
    await first.runner.close();
    const second = desk(store, ['Sorry, I cannot refund that. [DONE]']);
    const id = asked.pendingApprovals![0]!.id;
    const done = await second.runner.approve(KEY, [{ id, approved: false, reason: 'over the limit' }]);
    expect(done.status).toBe('completed');
    expect(second.runs).toEqual([]);
    const history = (await second.runner.session(KEY))?.history ?? [];
    expect(history).toContainEqual({ role: 'tool', content: 'denied: over the limit', toolCallId: 'r' });
    expect(second.model.calls[0]?.messages.at(-1)).toMatchObject({ role: 'tool', content: 'denied: over the limit' });
    await second.runner.close();
  });

  it('a user message while approvals are pending is saved and answered awaiting_approval; the crew does not run', async () => {
    const store = new MemoryCheckpointStore();
    const { runner, model } = desk(store, [reply('Refunding.', ['r', 'refund', { amount: 900 }]), 'ok [DONE]']);
    await runner.dispatch(KEY, say('refund 900'));
    const calls = model.calls.length;
    const outcome = await runner.dispatch(KEY, say('hello?'));
    expect(outcome).toMatchObject({ status: 'rejected', action: { type: 'reject', reason: 'awaiting_approval' } });
    expect(model.calls).toHaveLength(calls);
    expect((await runner.session(KEY))?.history.map((m) => m.content)).toEqual(['refund 900', 'hello?']);
    // Approving later: the block goes after the messages already in the history.
    const id = (await runner.session(KEY))!.pendingApprovals[0]!.id;
    expect((await runner.approve(KEY, [{ id, approved: true }])).status).toBe('completed');
    expect((await runner.session(KEY))?.history.map((m) => m.role)).toEqual([
      'user',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    await runner.close();
  });

  it('the transcript shows a tool’s object result as the object, while held and after; string results stay text', async () => {
    const store = new MemoryCheckpointStore();
    const receipt = { refunded: 250, reference: 'RF-1' };
    const objectTools: Tool[] = [
      { name: 'lookup', parameters: { type: 'object' }, execute: async () => ['[not json', '{"looks":'] },
      { name: 'refund', parameters: { type: 'object' }, execute: async () => receipt },
      { name: 'note', parameters: { type: 'object' }, execute: async () => '{not json' },
    ];
    const model = scriptedModel({
      clerk: [
        reply('Checking.', ['a', 'lookup', {}], ['b', 'refund', { amount: 250 }], ['c', 'note', {}]),
        'Refunded. [DONE]',
      ],
    });
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'desk',
          engine: crewEngine(
            { ...crew, agents: [{ id: 'clerk', tools: ['lookup', 'refund', 'note'] }] },
            { model, tools: objectTools },
          ),
        },
      ],
    });
    const asked = await runner.dispatch(KEY, say('refund'));
    const tool = async (id: string) =>
      (await runner.transcript(KEY)).find((e) => e.type === 'tool' && e.call.id === id);
    // Held: the allowed siblings' results are in the crew's state, not the history yet.
    expect(await tool('a')).toMatchObject({ status: 'done', result: ['[not json', '{"looks":'] });
    expect(await tool('c')).toMatchObject({ status: 'done', result: '{not json' });
    await runner.approve(KEY, [{ id: asked.pendingApprovals![0]!.id, approved: true }]);
    expect(await tool('a')).toMatchObject({ status: 'done', result: ['[not json', '{"looks":'] });
    expect(await tool('b')).toMatchObject({ status: 'done', result: receipt });
    expect(await tool('c')).toMatchObject({ status: 'done', result: '{not json' });
    await runner.close();
  });
});

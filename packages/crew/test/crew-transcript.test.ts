// CrewExecutor.transcript: the conversation of a crew state as people saw it.
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewArgumentError, CrewExecutor, type CrewConfigInput } from '@signalyard/crew';
import { POLICY, approvalCrew, calls, recordingTools } from './crew-support-approvals.js';

const crew: CrewConfigInput = {
  entryPoint: 'clerk',
  agents: [{ id: 'clerk', tools: ['refund', 'lookup', 'wipe'] }, { id: 'boss' }, { id: 'a' }, { id: 'b' }],
  settings: { handoffMode: 'tool', maxRounds: 2 },
  routing: {
    signals: {
      clerk: [
        { signal: '[BOSS]', target: 'boss' },
        { signal: '[ASK]', target: 'both' },
      ],
    },
    parallelGroups: { both: { agents: ['a', 'b'], nextAgent: 'boss' } },
  },
  approvals: POLICY,
};

/** The same crew handing off by marker, the boss ending the run with [DONE]. */
const markerCrew: CrewConfigInput = {
  ...crew,
  settings: { maxRounds: 6 },
  routing: { ...crew.routing, signals: { ...crew.routing!.signals, boss: [{ signal: '[DONE]', target: '' }] } },
};

describe('CrewExecutor.transcript', () => {
  it('a reply paused on approval: its text and pending call, never its transfer call', async () => {
    const { tools } = recordingTools();
    const model = scriptedModel([
      {
        content: 'Refunding, then the boss.',
        toolCalls: [
          { id: 'c1', name: 'refund', arguments: { amount: 500 } },
          { id: 'c2', name: 'transfer_to_boss', arguments: {} },
        ],
      },
    ]);
    const executor = new CrewExecutor({ crew, model, tools });
    const paused = await executor.execute('refund 500');
    expect(executor.transcript(paused.state.history, paused.state)).toEqual([
      { type: 'user', text: 'refund 500' },
      { type: 'assistant', agentId: 'clerk', text: 'Refunding, then the boss.' },
      {
        type: 'tool',
        call: { id: 'c1', name: 'refund', arguments: { amount: 500 } },
        status: 'pending_approval',
        approvalId: 'ap-1',
      },
    ]);
    // A state whose batch is malformed (stored by hand) shows only the history.
    expect(
      executor.transcript(paused.state.history, { approvals: { issued: 1, decided: [], batch: 'x' as never } }),
    ).toHaveLength(1);
  });

  it('a fallback handoff is shown as one', () => {
    const executor = new CrewExecutor({
      crew: { ...crew, settings: {} },
      model: scriptedModel([]),
      tools: recordingTools().tools,
    });
    const history: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'no marker here', name: 'clerk' },
      { role: 'assistant', content: 'the boss speaks', name: 'boss' },
    ];
    expect(executor.transcript(history)).toContainEqual({
      type: 'handoff',
      from: 'clerk',
      to: 'boss',
      via: 'fallback',
    });
  });

  it('a group that never ran (max_rounds) does not swallow the next user message', async () => {
    const model = scriptedModel([calls('Asking both.', ['t1', 'transfer_to_both', {}])]);
    const executor = new CrewExecutor({
      crew: { ...crew, settings: { handoffMode: 'tool', maxRounds: 1 } },
      model,
      tools: recordingTools().tools,
    });
    const response = await executor.execute('question');
    expect(response.reason).toBe('max_rounds');
    const history = [...response.state.history, { role: 'user' as const, content: 'hello?' }];
    expect(executor.transcript(history).map((e) => e.type)).toEqual(['user', 'assistant', 'user']);
  });

  it('is chronological: the held reply where it was produced (after its handoff), messages sent during the wait after it', async () => {
    const { tools } = recordingTools();
    const model = scriptedModel({
      clerk: ['Passing you to the boss. [BOSS]'],
      boss: [calls('Refunding 500.', ['r1', 'refund', { amount: 500 }]), 'Refunded. [DONE]'],
    });
    const executor = new CrewExecutor({ crew: approvalCrew(POLICY), model, tools });
    const paused = await executor.execute('refund 500');
    expect(paused.reason).toBe('awaiting_approval');
    const pending = {
      type: 'tool',
      call: { id: 'r1', name: 'refund', arguments: { amount: 500 } },
      status: 'pending_approval',
      approvalId: 'ap-1',
    } as const;
    const heldPart = [
      { type: 'user', text: 'refund 500' },
      { type: 'assistant', agentId: 'clerk', text: 'Passing you to the boss.' },
      // The handoff that led to the held reply is kept (the live stream showed it).
      { type: 'handoff', from: 'clerk', to: 'boss', via: 'signal' },
      { type: 'assistant', agentId: 'boss', text: 'Refunding 500.' },
    ] as const;
    expect(executor.transcript(paused.state.history, paused.state)).toEqual([...heldPart, pending]);
    // A message sent during the wait (the Runner saves it in the history, nothing runs) comes after the held reply.
    const waiting = [...paused.state.history, { role: 'user' as const, content: 'any news?' }];
    expect(executor.transcript(waiting, paused.state)).toEqual([
      ...heldPart,
      pending,
      { type: 'user', text: 'any news?' },
    ]);
    // Once approved, the history holds the block where it was held: the same order, the call done.
    const done = await executor.execute('', {
      state: { ...paused.state, history: waiting },
      approvals: [{ id: 'ap-1', approved: true }],
    });
    expect(executor.transcript(done.state.history, done.state)).toEqual(
      [
        ...heldPart,
        { ...pending, status: 'done', result: 'refund ok', approvalId: undefined },
        { type: 'user', text: 'any news?' },
        { type: 'assistant', agentId: 'boss', text: 'Refunded.' },
      ].map((e) => JSON.parse(JSON.stringify(e)) as unknown),
    );
    // A batch whose position is past the history's end (a trimmed history) goes last.
    const trimmed = {
      ...paused.state,
      approvals: { ...paused.state.approvals!, batch: { ...paused.state.approvals!.batch!, at: 99 } },
    };
    expect(executor.transcript(waiting, trimmed).at(-1)).toEqual(pending);
  });

  it("parallel members survive a reload: a handoff to each member (group named), then each member's visible reply", async () => {
    const model = scriptedModel({
      clerk: ['Asking both. [ASK]'],
      a: ['A thinks yes [BOSS]'],
      b: ['B thinks no'],
      boss: ['Both answered. [DONE]'],
    });
    const executor = new CrewExecutor({
      crew: markerCrew,
      model,
      tools: recordingTools().tools,
    });
    const response = await executor.execute('should we?');
    expect(executor.transcript(response.state.history, response.state)).toEqual([
      { type: 'user', text: 'should we?' },
      { type: 'assistant', agentId: 'clerk', text: 'Asking both.' },
      { type: 'handoff', from: 'clerk', to: 'a', via: 'parallel', group: 'both' },
      { type: 'handoff', from: 'clerk', to: 'b', via: 'parallel', group: 'both' },
      // markers hidden in members' replies too
      { type: 'assistant', agentId: 'a', text: 'A thinks yes', group: 'both' },
      { type: 'assistant', agentId: 'b', text: 'B thinks no', group: 'both' },
      { type: 'handoff', from: 'clerk', to: 'boss', via: 'parallel' },
      { type: 'assistant', agentId: 'boss', text: 'Both answered.' },
    ]);
    expect(response.reason).toBe('terminated_by_signal');
  });

  it("a group's results: a failed member keeps its handoff but has no reply; a reply with blank lines stays whole", () => {
    const executor = new CrewExecutor({ crew: markerCrew, model: scriptedModel([]), tools: recordingTools().tools });
    const group = { via: 'parallel', group: 'both' } as const;
    const only = (content: string) =>
      executor.transcript([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: '[ASK]', name: 'clerk' },
        { role: 'user', content },
      ]);
    expect(only('b: only b\n\nanswered')).toEqual([
      { type: 'user', text: 'q' },
      { type: 'handoff', from: 'clerk', to: 'a', ...group },
      { type: 'handoff', from: 'clerk', to: 'b', ...group },
      { type: 'assistant', agentId: 'b', text: 'only b\n\nanswered', group: 'both' },
    ]);
    expect(only('a: first\n\nstill a\n\nb: second').slice(3)).toEqual([
      { type: 'assistant', agentId: 'a', text: 'first\n\nstill a', group: 'both' },
      { type: 'assistant', agentId: 'b', text: 'second', group: 'both' },
    ]);
    // A member whose reply was only a marker shows no text, as live.
    expect(only('a: [BOSS]\n\nb: x').slice(3)).toEqual([{ type: 'assistant', agentId: 'b', text: 'x', group: 'both' }]);
  });

  it('refuses a history that is not a list of ChatMessages (CREW_HISTORY_INVALID)', () => {
    const executor = new CrewExecutor({ crew, model: scriptedModel([]), tools: recordingTools().tools });
    for (const [bad, message] of [
      ['nope', 'Invalid history "nope": expected a list of ChatMessages'],
      [
        [
          { role: 'user', content: 'ok' },
          { role: 'robot', content: 'x' },
        ],
        'Invalid history[1]: invalid role "robot"',
      ],
    ] as const) {
      let thrown: unknown;
      try {
        executor.transcript(bad as never);
      } catch (error) {
        thrown = error;
      }
      expect(CrewArgumentError.isInstance(thrown)).toBe(true);
      expect(thrown).toMatchObject({ code: 'CREW_HISTORY_INVALID' });
      expect((thrown as Error).message).toContain(message);
    }
  });
});

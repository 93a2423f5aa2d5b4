// CrewExecutor.transcript: the conversation of a crew state as people saw it.
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewArgumentError, CrewExecutor, type CrewConfigInput } from '@signalyard/crew';
import { POLICY, calls, recordingTools } from './crew-support-approvals.js';

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

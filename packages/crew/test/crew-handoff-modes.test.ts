// Every handoff behaviour, in both handoff modes: the same scripted replies, written with
// markers, hand off by marker in `marker` mode and by a call to the signal's transfer tool in
// `tool` mode (test/handoff-modes.ts converts them). What a user depends on — which agents run,
// the `handoff` events, path, limits, pauses, approvals, streaming provenance, transcripts — is
// the same in both.
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolCall } from '@signalyard/core';
import { CrewExecutor, parseCrewConfig, type CrewConfigInput, type CrewEvent } from '@signalyard/crew';
import { POLICY, calls, eventsOf, recordingTools, roundTrip } from './crew-support-approvals.js';
import { collect, endOf, trace } from './crew-support.js';
import { MODES, inMode, scriptIn, type Mode } from './handoff-modes.js';

const EXAM_YAML = `
entry_point: teacher
agents:
  - id: teacher
    name: Teacher
    handoff_targets: [student]
  - id: student
  - id: reporter
settings:
  max_handoffs: 5
  max_rounds: 10
routing:
  signals:
    teacher:
      - { signal: "[QUESTION]", target: parallel_question, description: "ask both" }
      - { signal: "[END_EXAM]", target: "" }
    student:
      - { signal: "[ANSWER]", target: teacher }
  agent_behaviors:
    reporter: { wait_for_signal: false, is_terminal: true }
  parallel_groups:
    parallel_question: { agents: [student, reporter], timeout_seconds: 30, wait_for_all: true, next_agent: teacher }
`;

/** Five agents, each routing to any other by `[TO_<ID>]`. */
function chainCrew(maxHandoffs: number, maxRounds = 50): CrewConfigInput {
  const ids = ['teacher', 'student', 'reporter', 'executor'];
  return {
    entryPoint: 'teacher',
    agents: ids.map((id) => ({ id })),
    settings: { maxHandoffs, maxRounds },
    routing: {
      signals: Object.fromEntries(
        ids.map((id) => [
          id,
          [
            ...ids.filter((t) => t !== id).map((t) => ({ signal: `[TO_${t.toUpperCase()}]`, target: t })),
            { signal: '[DONE]', target: '' },
          ],
        ]),
      ),
    },
  };
}

/** Every tool call in `history` is answered by a tool message right after its assistant message. */
function expectValidHistory(history: readonly ChatMessage[]): void {
  for (let i = 0; i < history.length; i++) {
    const m = history[i] as ChatMessage;
    if (m.toolCalls === undefined) continue;
    const answers = history.slice(i + 1, i + 1 + m.toolCalls.length);
    expect(answers.map((a) => a.role)).toEqual(m.toolCalls.map(() => 'tool'));
    expect(answers.map((a) => a.toolCallId).sort()).toEqual(m.toolCalls.map((c) => c.id).sort());
  }
}

/** The handoff events without the transfer tool (what both modes must agree on). */
const handoffs = (events: readonly CrewEvent[]): unknown[] =>
  eventsOf(events, 'handoff').map(({ tool: _tool, ...rest }) => rest);

describe.each(MODES)('handoff_mode: %s', (mode: Mode) => {
  describe('the exam crew (a parallel group and its next_agent)', () => {
    const crew = inMode(mode, parseCrewConfig(EXAM_YAML));

    it('runs teacher → parallel student + reporter → teacher twice, then ends on [END_EXAM]', async () => {
      const model = scriptIn(mode, crew, {
        teacher: ['Q1: 2 + 2? [QUESTION]', 'Q2: 3 × 3? [QUESTION]', 'Well done. [END_EXAM]'],
        // A member hands off nothing (the group's next_agent decides): it is offered no transfer tool.
        student: ['4', '9'],
        reporter: ['noted Q1', 'noted Q2'],
      });
      const events = await collect(new CrewExecutor({ crew, model }), 'Start the exam');
      const response = endOf(events);
      expect(response).toMatchObject({
        agentId: 'teacher',
        visibleContent: 'Well done.',
        reason: 'terminated_by_signal',
        signal: '[END_EXAM]',
        isTerminal: true,
        handoffs: 2,
      });
      // Twice: the teacher asks, the group answers, the run moves on to the teacher.
      const round = [
        'agent_start:teacher',
        'agent_response:teacher',
        'parallel_start',
        // Each member takes over from the teacher (not counted as a handoff: `handoffs: 2`).
        'handoff:teacher>student:parallel',
        'handoff:teacher>reporter:parallel',
        'agent_start:student@parallel_question',
        'agent_start:reporter@parallel_question',
        'agent_response:student@parallel_question',
        'agent_response:reporter@parallel_question',
        'member_end:student:succeeded',
        'member_end:reporter:succeeded',
        'parallel_end',
        'handoff:teacher>teacher:parallel',
      ];
      expect(trace(events)).toEqual([
        ...round,
        ...round,
        'agent_start:teacher',
        'agent_response:teacher',
        'terminate:terminated_by_signal',
        'end',
      ]);
      expect(events.at(-2)).toEqual({
        type: 'terminate',
        agentId: 'teacher',
        reason: 'terminated_by_signal',
        signal: '[END_EXAM]',
        ...(mode === 'tool' && { tool: 'finish' }),
      });
      // Members are offered no transfer tool: the group decides where the run goes.
      const memberCalls = model.calls.filter((c) => c.agentId !== 'teacher');
      expect(memberCalls.every((c) => c.tools === undefined)).toBe(true);
      expectValidHistory(response.state.history);
      // The collected results come back as one user message, after the teacher's reply (and its answered transfer call).
      const results = response.state.history.filter((m) => m.role === 'user').map((m) => m.content);
      expect(results).toEqual([
        'Start the exam',
        'student: 4\n\nreporter: noted Q1',
        'student: 9\n\nreporter: noted Q2',
      ]);
    });

    it('a group that does not fit in max_rounds ends the run before any member starts', async () => {
      const tight = inMode(mode, parseCrewConfig(EXAM_YAML.replace('max_rounds: 10', 'max_rounds: 2')));
      const model = scriptIn(mode, tight, { teacher: ['Q [QUESTION]'], student: [], reporter: [] });
      const events = await collect(new CrewExecutor({ crew: tight, model }), 'go');
      expect(endOf(events)).toMatchObject({ reason: 'max_rounds', agentId: 'teacher', handoffs: 0 });
      expect(events.some((e) => e.type === 'parallel_start')).toBe(false);
      expect(model.calls).toHaveLength(1);
      expectValidHistory(endOf(events).state.history);
    });

    it('streaming provenance: members stream with the group and their own path; handoffs extend the path', async () => {
      const model = scriptIn(mode, crew, {
        teacher: ['Question one [QUESTION]', 'Thanks [END_EXAM]'],
        student: ['four'],
        reporter: ['noted'],
      });
      const events = await collect(new CrewExecutor({ crew, model }), 'go');
      expect(eventsOf(events, 'text_delta').map((e) => [e.agentId, e.path, e.group, e.delta])).toEqual([
        ['teacher', ['teacher'], undefined, 'Question one'],
        ['student', ['teacher', 'student'], 'parallel_question', 'four'],
        ['reporter', ['teacher', 'reporter'], 'parallel_question', 'noted'],
        ['teacher', ['teacher', 'teacher'], undefined, 'Thanks'],
      ]);
    });
  });

  describe('limits', () => {
    it('with max_handoffs 5 the chain teacher → student → teacher → reporter → executor runs (4 handoffs) and the next ends the run', async () => {
      const crew = inMode(mode, chainCrew(5));
      const model = scriptIn(mode, crew, {
        teacher: ['[TO_STUDENT]', '[TO_REPORTER]'],
        student: ['[TO_TEACHER]'],
        reporter: ['[TO_EXECUTOR]'],
        executor: ['executed [TO_STUDENT]'],
      });
      const events = await collect(new CrewExecutor({ crew, model }), 'go');
      expect(endOf(events)).toMatchObject({
        agentId: 'executor',
        visibleContent: 'executed',
        reason: 'max_handoffs',
        isTerminal: false,
        handoffs: 4,
      });
      expect(handoffs(events)).toEqual([
        { type: 'handoff', from: 'teacher', to: 'student', via: 'signal', signal: '[TO_STUDENT]', handoffs: 1 },
        { type: 'handoff', from: 'student', to: 'teacher', via: 'signal', signal: '[TO_TEACHER]', handoffs: 2 },
        { type: 'handoff', from: 'teacher', to: 'reporter', via: 'signal', signal: '[TO_REPORTER]', handoffs: 3 },
        { type: 'handoff', from: 'reporter', to: 'executor', via: 'signal', signal: '[TO_EXECUTOR]', handoffs: 4 },
      ]);
      expect(events.at(-2)).toEqual({ type: 'terminate', agentId: 'executor', reason: 'max_handoffs' });
      expect(model.calls).toHaveLength(5);
      expectValidHistory(endOf(events).state.history);
    });

    it('two agents handing off to each other forever end with max_handoffs', async () => {
      const crew = inMode(mode, {
        entryPoint: 'ping',
        agents: [{ id: 'ping' }, { id: 'pong' }],
        settings: { maxRounds: 1000, maxHandoffs: 7 },
        routing: {
          signals: { ping: [{ signal: '[PONG]', target: 'pong' }], pong: [{ signal: '[PING]', target: 'ping' }] },
        },
      });
      const model = scriptIn(mode, crew, (r) => (r.agentId === 'ping' ? '[PONG]' : '[PING]'));
      const response = await new CrewExecutor({ crew, model }).execute('go');
      expect(response).toMatchObject({ reason: 'max_handoffs', handoffs: 6 });
      expect(model.calls).toHaveLength(7);
    });

    it('max_rounds caps model calls: the next agent never starts a turn it could not make a call for', async () => {
      const crew = inMode(mode, chainCrew(100, 3));
      const model = scriptIn(mode, crew, { teacher: ['[TO_STUDENT]', '[TO_STUDENT]'], student: ['[TO_TEACHER]'] });
      const events = await collect(new CrewExecutor({ crew, model }), 'go');
      expect(model.calls).toHaveLength(3);
      expect(endOf(events)).toMatchObject({ reason: 'max_rounds', agentId: 'teacher', handoffs: 3 });
      expect(trace(events).slice(-4)).toEqual([
        'agent_response:teacher',
        'handoff:teacher>student:signal',
        'terminate:max_rounds',
        'end',
      ]);
    });
  });

  describe('pause and resume', () => {
    const crew = inMode(mode, {
      entryPoint: 'triage',
      agents: [{ id: 'triage' }, { id: 'clerk' }],
      routing: {
        signals: { triage: [{ signal: '[CLERK]', target: 'clerk' }], clerk: [{ signal: '[DONE]', target: '' }] },
        agentBehaviors: { clerk: { waitForSignal: true } },
      },
    });

    it('pauses at a wait_for_signal agent after a handoff and resumes there with the returned state', async () => {
      const model = scriptIn(mode, crew, {
        triage: ['Over to the clerk [CLERK]'],
        clerk: ['Which order?', 'Done: refunded [DONE]'],
      });
      const executor = new CrewExecutor({ crew, model });
      const first = await executor.execute('refund please');
      expect(first).toMatchObject({ reason: 'paused', pausedAgentId: 'clerk', agentId: 'clerk', handoffs: 1 });
      const second = await executor.execute('order 7', { state: roundTrip(first.state) });
      expect(second).toMatchObject({ reason: 'terminated_by_signal', agentId: 'clerk', handoffs: 0 });
      expect(model.calls.map((c) => c.agentId)).toEqual(['triage', 'clerk', 'clerk']);
      expectValidHistory(second.state.history);
    });
  });

  describe('approvals of ordinary tools in the reply that hands off', () => {
    it('a held call pauses the run; once approved it runs once, then the handoff is made', async () => {
      const { tools, runs } = recordingTools();
      const crew = inMode(mode, {
        entryPoint: 'clerk',
        agents: [{ id: 'clerk', tools: ['refund', 'lookup', 'wipe'] }, { id: 'boss' }],
        routing: {
          signals: { clerk: [{ signal: '[BOSS]', target: 'boss' }], boss: [{ signal: '[DONE]', target: '' }] },
        },
        approvals: POLICY,
      });
      // In marker mode the reply that calls tools is a tool round: the marker comes in the next
      // reply. In tool mode the transfer call rides along with the refund in one reply.
      const refund: ToolCall = { id: 'c1', name: 'refund', arguments: { amount: 500 } };
      const model = scriptIn(mode, crew, {
        clerk:
          mode === 'marker'
            ? [calls('Refunding.', ['c1', 'refund', { amount: 500 }]), 'Refunded; over to the boss [BOSS]']
            : [
                {
                  content: 'Refunding; over to the boss.',
                  toolCalls: [refund, { id: 'c2', name: 'transfer_to_boss', arguments: { reason: 'refund done' } }],
                },
              ],
        boss: ['Approved and closed [DONE]'],
      });
      const executor = new CrewExecutor({ crew, model, tools });
      const pausedEvents = await collect(executor, 'refund 500');
      const paused = endOf(pausedEvents);
      expect(paused).toMatchObject({ reason: 'awaiting_approval', agentId: 'clerk', handoffs: 0 });
      expect(paused.pendingApprovals?.map((p) => p.toolName)).toEqual(['refund']);
      expect(runs).toEqual([]);
      expect(handoffs(pausedEvents)).toEqual([]);

      const events = await collect(executor, 'ignored', {
        state: roundTrip(paused.state),
        approvals: [{ id: 'ap-1', approved: true }],
      });
      const done = endOf(events);
      expect(runs).toEqual(['refund:{"amount":500}']);
      expect(done).toMatchObject({ reason: 'terminated_by_signal', agentId: 'boss', handoffs: 1 });
      expect(handoffs(events)).toEqual([
        {
          type: 'handoff',
          from: 'clerk',
          to: 'boss',
          via: 'signal',
          signal: '[BOSS]',
          handoffs: 1,
          ...(mode === 'tool' && { reason: 'refund done' }),
        },
      ]);
      expectValidHistory(done.state.history);
      expect(model.calls.map((c) => c.agentId)).toEqual(
        mode === 'marker' ? ['clerk', 'clerk', 'boss'] : ['clerk', 'boss'],
      );
    });

    it('a transfer call is never held: with every call asked, the reply still hands off once the others are decided', async () => {
      const { tools, runs } = recordingTools();
      const crew = inMode(mode, {
        entryPoint: 'clerk',
        agents: [{ id: 'clerk', tools: ['refund', 'lookup', 'wipe'] }, { id: 'boss' }],
        routing: {
          signals: { clerk: [{ signal: '[BOSS]', target: 'boss' }], boss: [{ signal: '[DONE]', target: '' }] },
        },
        approvals: { rules: [{ tool: '*', decision: 'ask' }] },
      });
      const model = scriptIn(mode, crew, {
        clerk: [calls('Looking.', ['c1', 'lookup', {}]), 'Found it [BOSS]'],
        boss: ['[DONE]'],
      });
      const executor = new CrewExecutor({ crew, model, tools });
      const paused = await executor.execute('go');
      expect(paused.pendingApprovals?.map((p) => p.toolName)).toEqual(['lookup']);
      const done = await executor.execute('', { state: paused.state, approvals: [{ id: 'ap-1', approved: false }] });
      expect(done).toMatchObject({ reason: 'terminated_by_signal', agentId: 'boss', handoffs: 1 });
      expect(runs).toEqual([]);
    });
  });

  describe('transcripts', () => {
    it('show the same conversation in both modes: visible text, the handoffs, no transfer call as a tool', async () => {
      const crew = inMode(mode, parseCrewConfig(EXAM_YAML));
      const model = scriptIn(mode, crew, {
        teacher: ['Q1 [QUESTION]', 'Fine. [END_EXAM]'],
        student: ['4'],
        reporter: ['noted'],
      });
      const executor = new CrewExecutor({ crew, model });
      const response = await executor.execute('Start');
      expect(executor.transcript(response.state.history, response.state)).toEqual([
        { type: 'user', text: 'Start' },
        { type: 'assistant', agentId: 'teacher', text: 'Q1' },
        // The group's members survive a reload (decisions-wave3.md §4): each takes over from the
        // teacher, then says its reply, as the live run showed them.
        { type: 'handoff', from: 'teacher', to: 'student', via: 'parallel', group: 'parallel_question' },
        { type: 'handoff', from: 'teacher', to: 'reporter', via: 'parallel', group: 'parallel_question' },
        { type: 'assistant', agentId: 'student', text: '4', group: 'parallel_question' },
        { type: 'assistant', agentId: 'reporter', text: 'noted', group: 'parallel_question' },
        { type: 'handoff', from: 'teacher', to: 'teacher', via: 'parallel' },
        { type: 'assistant', agentId: 'teacher', text: 'Fine.' },
      ]);
    });

    it('a chain with tool calls: each handoff once, tools shown with their results', async () => {
      const { tools } = recordingTools();
      const crew = inMode(mode, {
        entryPoint: 'a',
        agents: [{ id: 'a', tools: ['lookup'] }, { id: 'b' }, { id: 'c' }],
        routing: {
          signals: {
            a: [{ signal: '[B]', target: 'b' }],
            b: [{ signal: '[C]', target: 'c' }],
            c: [{ signal: '[DONE]', target: '' }],
          },
        },
      });
      const model = scriptIn(mode, crew, {
        a: [calls('Let me look.', ['l1', 'lookup', { q: 1 }]), 'Found. [B]'],
        b: ['Passing on [C]'],
        c: ['All done [DONE]'],
      });
      const executor = new CrewExecutor({ crew, model, tools });
      const response = await executor.execute('hello');
      expect(executor.transcript(response.state.history)).toEqual([
        { type: 'user', text: 'hello' },
        { type: 'assistant', agentId: 'a', text: 'Let me look.' },
        { type: 'tool', call: { id: 'l1', name: 'lookup', arguments: { q: 1 } }, status: 'done', result: 'lookup ok' },
        { type: 'assistant', agentId: 'a', text: 'Found.' },
        { type: 'handoff', from: 'a', to: 'b', via: 'signal' },
        { type: 'assistant', agentId: 'b', text: 'Passing on' },
        { type: 'handoff', from: 'b', to: 'c', via: 'signal' },
        { type: 'assistant', agentId: 'c', text: 'All done' },
      ]);
    });
  });
});

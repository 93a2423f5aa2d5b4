import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ChatMessage, ChatRequest } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import {
  CrewExecutor,
  parseCrewConfig,
  resolveCrewConfig,
  type CrewConfigInput,
  type CrewEndReason,
  type CrewEvent,
  type CrewResponse,
  type CrewApprovalState,
  type CrewState,
} from '@signalyard/crew';
import { collect, deferred, endOf, trace } from './crew-support.js';

// The source design's exam crew (the contract's crew.yaml), with a teacher system prompt.
const EXAM_YAML = `
entry_point: teacher
agents:
  - id: teacher
    name: Teacher
    system_prompt: "You are the teacher."
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

const messagesOf = (history: readonly ChatMessage[]): string[] =>
  history.map((m) => `${m.role}${m.name === undefined ? '' : `(${m.name})`}: ${m.content}`);

/** Five agents, each routing to any other by `[TO_<ID>]`. */
function chainCrew(maxHandoffs: number, extra: Partial<CrewConfigInput> = {}): CrewConfigInput {
  const ids = ['teacher', 'student', 'reporter', 'executor'];
  return {
    entryPoint: 'teacher',
    agents: ids.map((id) => ({ id })),
    settings: { maxHandoffs, maxRounds: 50 },
    routing: {
      signals: Object.fromEntries(
        ids.map((id) => [
          id,
          ids.filter((t) => t !== id).map((t) => ({ signal: `[TO_${t.toUpperCase()}]`, target: t })),
        ]),
      ),
    },
    ...extra,
  };
}

describe('CrewExecutor: the exam crew of the source design', () => {
  it('runs teacher → parallel student + reporter → teacher twice, then ends on [END_EXAM]', async () => {
    const model = scriptedModel({
      teacher: ['Q1: 2 + 2? [QUESTION]', 'Q2: 3 × 3? [QUESTION]', 'Well done. [END_EXAM]'],
      student: ['4 [ANSWER]', '9 [ANSWER]'],
      reporter: ['noted Q1', 'noted Q2'],
    });
    const executor = new CrewExecutor({ crew: parseCrewConfig(EXAM_YAML), model });
    const events = await collect(executor, 'Start the exam');
    const response = endOf(events);

    expect(response).toMatchObject({
      agentId: 'teacher',
      content: 'Well done. [END_EXAM]',
      reason: 'terminated_by_signal',
      isTerminal: true,
      handoffs: 2,
    });
    expect(messagesOf(response.state.history)).toEqual([
      'user: Start the exam',
      'assistant(teacher): Q1: 2 + 2? [QUESTION]',
      'user: student: 4 [ANSWER]\n\nreporter: noted Q1',
      'assistant(teacher): Q2: 3 × 3? [QUESTION]',
      'user: student: 9 [ANSWER]\n\nreporter: noted Q2',
      'assistant(teacher): Well done. [END_EXAM]',
    ]);
    // Each member saw the complete history up to the teacher's question, and nothing of the other member.
    const studentCalls = model.calls.filter((c) => c.agentId === 'student');
    expect(messagesOf(studentCalls[1]!.messages)).toEqual(messagesOf(response.state.history.slice(0, 4)));
    // The teacher sees the aggregated results; its system prompt comes first on every call.
    const teacherCalls = model.calls.filter((c) => c.agentId === 'teacher');
    expect(teacherCalls.map((c) => c.messages[0])).toEqual(
      Array(3).fill({ role: 'system', content: 'You are the teacher.' }),
    );
    expect(teacherCalls[1]!.messages.at(-1)).toEqual({
      role: 'user',
      content: 'student: 4 [ANSWER]\n\nreporter: noted Q1',
    });
    expect(model.calls.filter((c) => c.agentId !== 'teacher').every((c) => c.messages[0]!.role !== 'system')).toBe(
      true,
    );

    expect(trace(events)).toEqual([
      'agent_start:teacher',
      'agent_response:teacher',
      'parallel_start',
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
      'agent_start:teacher',
      'agent_response:teacher',
      'parallel_start',
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
      'agent_start:teacher',
      'agent_response:teacher',
      'terminate:terminated_by_signal',
      'end',
    ]);
  });

  it('regression: parallel results are aggregated in group-declaration order, not completion order (the Go framework used random order)', async () => {
    const studentReply = deferred<string>();
    const model = scriptedModel({
      teacher: ['Q [QUESTION]', 'ok [END_EXAM]'],
      student: [() => studentReply.promise],
      reporter: ['noted first'],
    });
    const executor = new CrewExecutor({ crew: parseCrewConfig(EXAM_YAML), model });
    const events: CrewEvent[] = [];
    const done = (async () => {
      for await (const e of executor.executeStream('go')) {
        events.push(e);
        if (e.type === 'parallel_member_end' && e.agentId === 'reporter') studentReply.resolve('answered last');
      }
    })();
    await done;
    const members = events.filter((e) => e.type === 'parallel_member_end').map((e) => e.agentId);
    expect(members).toEqual(['reporter', 'student']); // completion order
    const parallelEnd = events.find((e) => e.type === 'parallel_end');
    expect(parallelEnd).toEqual({
      type: 'parallel_end',
      group: 'parallel_question',
      succeeded: ['student', 'reporter'],
    });
    expect(endOf(events).state.history[2]).toEqual({
      role: 'user',
      content: 'student: answered last\n\nreporter: noted first',
    });
  });
});

describe('CrewExecutor: requests', () => {
  it('sends the system prompt first, then the shared history, with agentId and an AbortSignal on every request', async () => {
    const model = scriptedModel({ a: ['to b [B]'], b: ['done [END]'] });
    const executor = new CrewExecutor({
      crew: {
        entryPoint: 'a',
        agents: [{ id: 'a', systemPrompt: 'You are A.' }, { id: 'b' }],
        routing: { signals: { a: [{ signal: '[B]', target: 'b' }], b: [{ signal: '[END]', target: '' }] } },
      },
      model,
    });
    await executor.execute('hello');
    expect(model.calls.map((c) => c.agentId)).toEqual(['a', 'b']);
    expect(model.calls[0]!.messages).toEqual([
      { role: 'system', content: 'You are A.' },
      { role: 'user', content: 'hello' },
    ]);
    expect(model.calls[1]!.messages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'to b [B]', name: 'a' },
    ]);
    for (const call of model.calls) expect(call.abortSignal).toBeInstanceOf(AbortSignal);
    expect(model.calls.every((c) => c.tools === undefined)).toBe(true);
  });

  it('links the request abortSignal to the caller’s: aborting the caller’s aborts the request’s', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const model = scriptedModel((request: ChatRequest) => {
      seen = request.abortSignal;
      controller.abort('stop');
      return 'x';
    });
    const executor = new CrewExecutor({ crew: { entryPoint: 'a', agents: [{ id: 'a' }] }, model });
    await expect(executor.execute('go', { abortSignal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
    expect(seen).not.toBe(controller.signal);
    expect(seen?.aborted).toBe(true);
  });

  it('treats an empty system prompt as none', async () => {
    const model = scriptedModel(['x']);
    const executor = new CrewExecutor({ crew: { entryPoint: 'a', agents: [{ id: 'a', systemPrompt: '' }] }, model });
    await executor.execute('go');
    expect(model.calls[0]!.messages).toEqual([{ role: 'user', content: 'go' }]);
  });

  it('trims the history sent to the model to max_history_messages (the system prompt not counted), keeping the full history in the state', async () => {
    const model = scriptedModel(['1 [B]', '2 [A]', '3 [B]', '4 [END]']);
    const executor = new CrewExecutor({
      crew: {
        entryPoint: 'a',
        agents: [{ id: 'a', systemPrompt: 'sys' }, { id: 'b' }],
        settings: { maxHistoryMessages: 2, maxHandoffs: 10 },
        routing: {
          signals: {
            a: [{ signal: '[B]', target: 'b' }],
            b: [
              { signal: '[A]', target: 'a' },
              { signal: '[END]', target: '' },
            ],
          },
        },
      },
      model,
    });
    const response = await executor.execute('go');
    expect(model.calls.map((c) => c.messages.map((m) => m.content))).toEqual([
      ['sys', 'go'],
      ['go', '1 [B]'],
      ['sys', '1 [B]', '2 [A]'],
      ['2 [A]', '3 [B]'],
    ]);
    expect(response.state.history).toHaveLength(5);
  });
});

describe('CrewExecutor: termination and routing', () => {
  const crew: CrewConfigInput = {
    entryPoint: 'a',
    agents: [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
    routing: {
      signals: {
        a: [
          { signal: '[NEXT]', target: 'b' },
          { signal: '[OTHER]', target: 'c' },
          { signal: '[DONE]', target: '' },
          { signal: '[STOP]', target: '' },
        ],
        b: [{ signal: '[DONE]', target: '' }],
        c: [{ signal: '[DONE]', target: '' }],
      },
    },
  };

  it('termination beats routing: a reply with both [NEXT] and [DONE] ends the run, whatever their order', async () => {
    const model = scriptedModel({ a: ['[NEXT] and [DONE]'] });
    const events = await collect(new CrewExecutor({ crew, model }), 'go');
    expect(endOf(events)).toMatchObject({
      reason: 'terminated_by_signal',
      isTerminal: true,
      agentId: 'a',
      content: '[NEXT] and [DONE]',
      handoffs: 0,
    });
    expect(events.at(-2)).toEqual({
      type: 'terminate',
      agentId: 'a',
      reason: 'terminated_by_signal',
      signal: '[DONE]',
    });
    expect(model.calls).toHaveLength(1);
  });

  it('regression: termination by signal is a successful end, not an error (the Go framework reported it as an error)', async () => {
    const model = scriptedModel({ a: ['bye [DONE]'] });
    const executor = new CrewExecutor({ crew, model });
    const response = await executor.execute('go');
    expect(response.reason).toBe('terminated_by_signal');
    const events = await collect(new CrewExecutor({ crew, model: scriptedModel({ a: ['bye [DONE]'] }) }), 'go');
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    expect(events.at(-1)?.type).toBe('end');
  });

  it('reports the first termination signal in config order', async () => {
    const model = scriptedModel({ a: ['[STOP] then [DONE]'] });
    const events = await collect(new CrewExecutor({ crew, model }), 'go');
    expect(events.at(-2)).toMatchObject({ type: 'terminate', signal: '[DONE]' });
  });

  it('routes by the first matching signal in config order, not by position in the reply', async () => {
    const model = scriptedModel({ a: ['[OTHER] first, then [NEXT]'], b: ['[DONE]'] });
    const events = await collect(new CrewExecutor({ crew, model }), 'go');
    expect(events.find((e) => e.type === 'handoff')).toEqual({
      type: 'handoff',
      from: 'a',
      to: 'b',
      via: 'signal',
      signal: '[NEXT]',
      handoffs: 1,
    });
    expect(endOf(events).agentId).toBe('b');
  });

  it('matches signals at every level (case-insensitive, normalised)', async () => {
    const model = scriptedModel({ a: ['please [ next ]'], b: ['[done]'] });
    const response = await new CrewExecutor({ crew, model }).execute('go');
    expect(response).toMatchObject({ agentId: 'b', reason: 'terminated_by_signal', handoffs: 1 });
  });

  it('hands the reply on: the next agent sees it as the last message of the history', async () => {
    const model = scriptedModel({ a: ['over to you [NEXT]'], b: ['[DONE]'] });
    await new CrewExecutor({ crew, model }).execute('go');
    expect(model.calls[1]!.messages.at(-1)).toEqual({ role: 'assistant', content: 'over to you [NEXT]', name: 'a' });
  });

  it('a signal target that names nothing known never reaches a run: the constructor rejects it (validation cannot be bypassed)', () => {
    const bad = {
      entryPoint: 'a',
      agents: [{ id: 'a' }],
      routing: { signals: { a: [{ signal: '[X]', target: 'ghost' }] } },
    };
    expect(() => new CrewExecutor({ crew: bad, model: scriptedModel([]) })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  });
});

describe('CrewExecutor: behaviours and fallback', () => {
  it('fallback: the first handoff target that is not the current agent', async () => {
    const model = scriptedModel({ a: ['no signal here'], c: ['[DONE]'] });
    const crew: CrewConfigInput = {
      entryPoint: 'a',
      agents: [{ id: 'a', handoffTargets: ['a', 'c', 'b'] }, { id: 'b' }, { id: 'c' }],
      routing: { signals: { c: [{ signal: '[DONE]', target: '' }] } },
    };
    const events = await collect(new CrewExecutor({ crew, model }), 'go');
    expect(events.find((e) => e.type === 'handoff')).toEqual({
      type: 'handoff',
      from: 'a',
      to: 'c',
      via: 'fallback',
      handoffs: 1,
    });
  });

  it('fallback without handoff targets: the first other agent in crew order', async () => {
    const model = scriptedModel({ b: ['nothing'], a: ['[DONE]'] });
    const crew: CrewConfigInput = {
      entryPoint: 'b',
      agents: [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
      routing: { signals: { a: [{ signal: '[DONE]', target: '' }] } },
    };
    const events = await collect(new CrewExecutor({ crew, model }), 'go');
    expect(trace(events)).toContain('handoff:b>a:fallback');
  });

  it('fallback with nobody else: ends with no_next_agent and the last reply', async () => {
    const model = scriptedModel(['all alone']);
    const response = await new CrewExecutor({ crew: { entryPoint: 'solo', agents: [{ id: 'solo' }] }, model }).execute(
      'go',
    );
    expect(response).toMatchObject({
      agentId: 'solo',
      content: 'all alone',
      reason: 'no_next_agent',
      isTerminal: false,
      handoffs: 0,
    });
    expect(response).not.toHaveProperty('pausedAgentId');
  });

  it('a terminal agent ends the run when no signal routes its reply, but its signals still route', async () => {
    const crew: CrewConfigInput = {
      entryPoint: 'a',
      agents: [{ id: 'a' }, { id: 'b' }],
      routing: {
        signals: { a: [{ signal: '[B]', target: 'b' }] },
        agentBehaviors: { a: { isTerminal: true }, b: { isTerminal: true } },
      },
    };
    const routed = await new CrewExecutor({
      crew,
      model: scriptedModel({ a: ['go on [B]'], b: ['final word'] }),
    }).execute('go');
    expect(routed).toMatchObject({
      agentId: 'b',
      content: 'final word',
      reason: 'terminal_agent',
      isTerminal: true,
      handoffs: 1,
    });
    const events = await collect(new CrewExecutor({ crew, model: scriptedModel({ a: ['just this'] }) }), 'go');
    expect(events.slice(-2)).toEqual([
      { type: 'terminate', agentId: 'a', reason: 'terminal_agent' },
      expect.objectContaining({ type: 'end' }),
    ]);
  });

  it('wait_for_signal is checked before is_terminal', async () => {
    const crew: CrewConfigInput = {
      entryPoint: 'a',
      agents: [{ id: 'a' }],
      routing: { agentBehaviors: { a: { isTerminal: true, waitForSignal: true } } },
    };
    const response = await new CrewExecutor({ crew, model: scriptedModel(['hm']) }).execute('go');
    expect(response.reason).toBe('paused');
  });
});

describe('CrewExecutor: limits', () => {
  it('regression: with max_handoffs 5 the chain teacher → student → teacher → reporter → executor runs (4 handoffs) and the next ends the run (the source diagram’s count)', async () => {
    const model = scriptedModel({
      teacher: ['[TO_STUDENT]', '[TO_REPORTER]'],
      student: ['[TO_TEACHER]'],
      reporter: ['[TO_EXECUTOR]'],
      executor: ['executed [TO_STUDENT]'],
    });
    const events = await collect(new CrewExecutor({ crew: chainCrew(5), model }), 'go');
    expect(endOf(events)).toMatchObject({
      agentId: 'executor',
      content: 'executed [TO_STUDENT]',
      reason: 'max_handoffs',
      isTerminal: false,
      handoffs: 4,
    });
    expect(
      events.filter((e) => e.type === 'handoff').map((e) => (e.type === 'handoff' ? `${e.to}:${e.handoffs}` : '')),
    ).toEqual(['student:1', 'teacher:2', 'reporter:3', 'executor:4']);
    expect(events.at(-2)).toEqual({ type: 'terminate', agentId: 'executor', reason: 'max_handoffs' });
    expect(model.calls).toHaveLength(5);
  });

  it('regression: two agents routing to each other by signals end with max_handoffs (the Go framework looped forever)', async () => {
    const crew: CrewConfigInput = {
      entryPoint: 'ping',
      agents: [{ id: 'ping' }, { id: 'pong' }],
      settings: { maxRounds: 1000, maxHandoffs: 7 },
      routing: {
        signals: { ping: [{ signal: '[PONG]', target: 'pong' }], pong: [{ signal: '[PING]', target: 'ping' }] },
      },
    };
    const model = scriptedModel((r) => (r.agentId === 'ping' ? '[PONG]' : '[PING]'));
    const response = await new CrewExecutor({ crew, model }).execute('go');
    expect(response).toMatchObject({ reason: 'max_handoffs', handoffs: 6 });
    expect(model.calls).toHaveLength(7);
  });

  it('max_handoffs applies to fallback handoffs too (two agents without signals)', async () => {
    const crew: CrewConfigInput = {
      entryPoint: 'a',
      agents: [{ id: 'a' }, { id: 'b' }],
      settings: { maxHandoffs: 3, maxRounds: 100 },
    };
    const response = await new CrewExecutor({ crew, model: scriptedModel(() => 'nothing to say') }).execute('go');
    expect(response).toMatchObject({ reason: 'max_handoffs', handoffs: 2 });
  });

  it('max_handoffs 1 allows no handoff at all', async () => {
    const response = await new CrewExecutor({ crew: chainCrew(1), model: scriptedModel(['[TO_STUDENT]']) }).execute(
      'go',
    );
    expect(response).toMatchObject({ reason: 'max_handoffs', handoffs: 0, agentId: 'teacher' });
  });

  it('max_rounds caps model calls: the run ends when another call would be needed, with the last reply', async () => {
    const crew = chainCrew(100, { settings: { maxHandoffs: 100, maxRounds: 3 } });
    const model = scriptedModel({ teacher: ['[TO_STUDENT]', '[TO_STUDENT]'], student: ['[TO_TEACHER]'] });
    const events = await collect(new CrewExecutor({ crew, model }), 'go');
    expect(model.calls).toHaveLength(3);
    expect(endOf(events)).toMatchObject({
      reason: 'max_rounds',
      agentId: 'teacher',
      content: '[TO_STUDENT]',
      handoffs: 3,
      isTerminal: false,
    });
    // The student never starts a turn it could not make a call for.
    expect(trace(events).slice(-4)).toEqual([
      'agent_response:teacher',
      'handoff:teacher>student:signal',
      'terminate:max_rounds',
      'end',
    ]);
  });

  it('max_rounds before a parallel group that does not fit: the run ends before starting any member', async () => {
    const crew = parseCrewConfig(EXAM_YAML.replace('max_rounds: 10', 'max_rounds: 2'));
    const model = scriptedModel({ teacher: ['Q [QUESTION]'], student: [], reporter: [] });
    const events = await collect(new CrewExecutor({ crew, model }), 'go');
    expect(endOf(events)).toMatchObject({
      reason: 'max_rounds',
      agentId: 'teacher',
      content: 'Q [QUESTION]',
      handoffs: 0,
    });
    expect(events.some((e) => e.type === 'parallel_start')).toBe(false);
    expect(model.calls).toHaveLength(1);
  });

  it('a group that exactly fits runs, and the run ends with max_rounds when the next agent has no call left', async () => {
    const crew = parseCrewConfig(EXAM_YAML.replace('max_rounds: 10', 'max_rounds: 3'));
    const model = scriptedModel({ teacher: ['Q [QUESTION]'], student: ['4'], reporter: ['ok'] });
    const response = await new CrewExecutor({ crew, model }).execute('go');
    expect(model.calls).toHaveLength(3);
    expect(response).toMatchObject({
      reason: 'max_rounds',
      handoffs: 1,
      content: 'student: 4\n\nreporter: ok',
      agentId: 'teacher',
    });
  });
});

describe('CrewExecutor: types', () => {
  it('exposes the contract’s shapes', () => {
    expectTypeOf<CrewResponse['reason']>().toEqualTypeOf<CrewEndReason>();
    expectTypeOf<CrewEndReason>().toEqualTypeOf<
      | 'terminated_by_signal'
      | 'terminal_agent'
      | 'paused'
      | 'max_handoffs'
      | 'max_rounds'
      | 'no_next_agent'
      | 'awaiting_approval'
    >();
    expectTypeOf<CrewState>().toEqualTypeOf<{
      history: ChatMessage[];
      pausedAgentId?: string;
      lastAgentId?: string;
      approvals?: CrewApprovalState;
    }>();
    expectTypeOf<Extract<CrewEvent, { type: 'handoff' }>['via']>().toEqualTypeOf<'signal' | 'parallel' | 'fallback'>();
    expectTypeOf<CrewExecutor['execute']>().returns.resolves.toEqualTypeOf<CrewResponse>();
    expectTypeOf<CrewExecutor['executeStream']>().returns.toEqualTypeOf<AsyncIterable<CrewEvent>>();
    const crew = resolveCrewConfig({ entryPoint: 'a', agents: [{ id: 'a' }] });
    expectTypeOf(new CrewExecutor({ crew, model: scriptedModel([]) }).crew).toEqualTypeOf(crew);
  });
});

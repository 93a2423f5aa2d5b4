import { describe, expect, it } from 'vitest';
import type { Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, parseCrewConfig, resolveCrewConfig, type CrewState } from '@signalyard/crew';
import { collect, endOf, runError, trace } from './crew-support.js';
import { POLICY, approvalCrew, calls, eventsOf, recordingTools, roundTrip } from './crew-support-approvals.js';

const BIG = calls('refunding', ['r1', 'refund', { amount: 900 }]);

describe('CrewExecutor approvals: the durable claim', () => {
  it('records the call as started and awaits commit(state) before the tool runs', async () => {
    const order: string[] = [];
    const committed: CrewState[] = [];
    const { tools, runs } = recordingTools();
    const traced: Tool[] = tools.map((t) => ({
      ...t,
      execute: (args, ctx) => {
        order.push(`run ${t.name}`);
        return t.execute(args, ctx);
      },
    }));
    const model = scriptedModel({ clerk: [BIG, 'ok [DONE]'] });
    const executor = new CrewExecutor({ crew: approvalCrew(POLICY), model, tools: traced });
    const first = await executor.execute('go', {
      commit: () => {
        order.push('commit');
        return Promise.resolve();
      },
    });
    expect(order).toEqual([]); // a held call makes no claim
    const done = await executor.execute('', {
      state: first.state,
      approvals: [{ id: 'ap-1', approved: true }],
      commit: async (state) => {
        order.push('commit');
        committed.push(roundTrip(state));
        await Promise.resolve();
      },
    });
    expect(order).toEqual(['commit', 'run refund']);
    expect(runs).toEqual(['refund:{"amount":900}']);
    expect(committed[0]?.approvals?.batch?.calls[0]).toMatchObject({ status: 'started', approval: { id: 'ap-1' } });
    expect(committed[0]?.history).toEqual([{ role: 'user', content: 'go' }]);
    expect(done.reason).toBe('terminated_by_signal');
  });

  it('after a resume, an allowed call of the next reply is committed as started before it runs; resumed from that commit it never runs again', async () => {
    const order: string[] = [];
    const committed: CrewState[] = [];
    const { tools, runs } = recordingTools();
    const traced: Tool[] = tools.map((t) => ({
      ...t,
      execute: (args, ctx) => {
        order.push(`run ${t.name}`);
        return t.execute(args, ctx);
      },
    }));
    const model = scriptedModel({
      clerk: [BIG, calls('checking', ['l1', 'lookup', { order: 7 }]), 'ok [DONE]', 'ok again [DONE]'],
    });
    const executor = new CrewExecutor({ crew: approvalCrew(POLICY), model, tools: traced });
    const first = await executor.execute('go');
    const commit = (state: CrewState): Promise<void> => {
      order.push('commit');
      committed.push(roundTrip(state));
      return Promise.resolve();
    };
    await executor.execute('', { state: roundTrip(first.state), approvals: [{ id: 'ap-1', approved: true }], commit });
    expect(order).toEqual(['commit', 'run refund', 'commit', 'run lookup']);
    const claim = committed[1] as CrewState;
    expect(claim.approvals?.batch?.calls).toEqual([{ status: 'started' }]);
    // The refund's block is in the claimed state's history; the lookup reply is held in the batch.
    expect(claim.history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    // The process dies after the lookup's side effect: resumed from the claim, it is not run again.
    const again = await executor.execute('', { state: claim, commit });
    expect(runs).toEqual(['refund:{"amount":900}', 'lookup:{"order":7}']);
    expect(again.state.history.map((m) => m.content).slice(-2)).toEqual([
      'outcome unknown: not retried',
      'ok again [DONE]',
    ]);
  });

  it('denials that complete the batch are committed before the run goes on; a rejected commit stops it before the next reply', async () => {
    const { tools, runs } = recordingTools();
    const model = scriptedModel({ clerk: [BIG, calls('looking', ['l1', 'lookup', { order: 7 }]), 'ok [DONE]'] });
    const executor = new CrewExecutor({ crew: approvalCrew(POLICY), model, tools });
    const first = await executor.execute('go');
    const deny = [{ id: 'ap-1', approved: false, reason: 'no' }];
    // Another run committed the same batch first: this one stops; nothing of the next reply runs.
    const lost = await collect(executor, '', {
      state: roundTrip(first.state),
      approvals: deny,
      commit: () => Promise.reject(new Error('checkpoint conflict')),
    });
    const last = lost.at(-1);
    if (last?.type !== 'error') throw new Error('expected an error event');
    expect(last.error.code).toBe('CREW_COMMIT_FAILED');
    expect(runs).toEqual([]);
    expect(model.calls).toHaveLength(1);
    // With the commit saved, the run goes on: the committed state holds every call answered.
    const committed: CrewState[] = [];
    const done = await executor.execute('', {
      state: roundTrip(first.state),
      approvals: deny,
      commit: (state) => {
        committed.push(roundTrip(state));
        return Promise.resolve();
      },
    });
    // Then the allowed lookup of the next reply is claimed (committed as started) before it runs.
    expect(committed).toHaveLength(2);
    expect(committed[0]?.approvals?.batch?.calls[0]).toMatchObject({ status: 'done', content: 'denied: no' });
    expect(committed[1]?.approvals?.batch?.calls).toEqual([{ status: 'started' }]);
    expect(committed[1]?.approvals?.batch?.message.toolCalls?.[0]?.name).toBe('lookup');
    expect(runs).toEqual(['lookup:{"order":7}']);
    expect(done.reason).toBe('terminated_by_signal');
  });

  it('a commit that rejects fails the run with CREW_COMMIT_FAILED; the tool does not run; the error state can retry', async () => {
    const { executor, runs } = (() => {
      const r = recordingTools();
      const model = scriptedModel({ clerk: [BIG, 'ok [DONE]'] });
      return { executor: new CrewExecutor({ crew: approvalCrew(POLICY), model, tools: r.tools }), runs: r.runs };
    })();
    const first = await executor.execute('go');
    const conflict = new Error('checkpoint conflict');
    const events = await collect(executor, '', {
      state: first.state,
      approvals: [{ id: 'ap-1', approved: true }],
      commit: () => Promise.reject(conflict),
    });
    const last = events.at(-1);
    if (last?.type !== 'error') throw new Error('expected an error event');
    expect(last.error.code).toBe('CREW_COMMIT_FAILED');
    expect(last.error.cause).toBe(conflict);
    expect(runs).toEqual([]);
    expect(last.state.approvals?.batch?.calls[0]?.status).toBe('approved');
    const retried = await executor.execute('', { state: roundTrip(last.state) });
    expect(runs).toEqual(['refund:{"amount":900}']);
    expect(retried.reason).toBe('terminated_by_signal');
  });

  it('a commit that throws synchronously is a rejection too', async () => {
    const r = recordingTools();
    const executor = new CrewExecutor({
      crew: approvalCrew(POLICY),
      model: scriptedModel({ clerk: [BIG] }),
      tools: r.tools,
    });
    const first = await executor.execute('go');
    const error = await runError(
      executor.execute('', {
        state: first.state,
        approvals: [{ id: 'ap-1', approved: true }],
        commit: () => {
          throw new Error('sync');
        },
      }),
    );
    expect(error.code).toBe('CREW_COMMIT_FAILED');
    expect(r.runs).toEqual([]);
  });

  it('a claimed call without a result is answered "outcome unknown: not retried" and never runs again', async () => {
    const r = recordingTools();
    const model = scriptedModel({ clerk: [BIG, 'I see. [DONE]'] });
    const executor = new CrewExecutor({ crew: approvalCrew(POLICY), model, tools: r.tools });
    const first = await executor.execute('go');
    let saved: CrewState | undefined;
    // The process "dies" right after the claim is saved: the run after it starts from that save.
    const crash = new Error('kill -9');
    await runError(
      executor.execute('', {
        state: first.state,
        approvals: [{ id: 'ap-1', approved: true }],
        commit: (state) => {
          saved = roundTrip(state);
          return Promise.reject(crash);
        },
      }),
    );
    const events = await collect(executor, '', {
      state: saved as CrewState,
      approvals: [{ id: 'ap-1', approved: true }],
    });
    const done = endOf(events);
    expect(r.runs).toEqual([]);
    expect(done.state.history[2]).toEqual({ role: 'tool', content: 'outcome unknown: not retried', toolCallId: 'r1' });
    expect(eventsOf(events, 'tool_result')).toMatchObject([{ result: 'outcome unknown: not retried', isError: true }]);
    expect(eventsOf(events, 'warning')).toHaveLength(1); // ap-1 was already decided in the saved state
    expect(model.calls[1]?.messages.at(-1)).toEqual({
      role: 'tool',
      content: 'outcome unknown: not retried',
      toolCallId: 'r1',
    });
  });

  it('an abort while an approved tool runs leaves it claimed: the next run answers outcome unknown', async () => {
    const controller = new AbortController();
    let calls = 0;
    const slow: Tool = {
      name: 'refund',
      parameters: { type: 'object' },
      execute: () => {
        calls++;
        controller.abort(new Error('stop'));
        return new Promise(() => undefined);
      },
    };
    const r = recordingTools();
    const model = scriptedModel({ clerk: [BIG, 'ok [DONE]'] });
    const executor = new CrewExecutor({
      crew: approvalCrew(POLICY),
      model,
      tools: [slow, ...r.tools.filter((t) => t.name !== 'refund')],
    });
    const first = await executor.execute('go');
    const error = await runError(
      executor.execute('', {
        state: first.state,
        approvals: [{ id: 'ap-1', approved: true }],
        abortSignal: controller.signal,
      }),
    );
    expect(error.code).toBe('ABORTED');
    expect(error.state.approvals?.batch?.calls[0]?.status).toBe('started');
    const done = await executor.execute('', { state: roundTrip(error.state) });
    expect(calls).toBe(1);
    expect(done.state.history[2]?.content).toBe('outcome unknown: not retried');
  });
});

describe('CrewExecutor approvals: one run across the pause', () => {
  it('max_rounds counts the model calls before and after the pause', async () => {
    const r = recordingTools();
    const model = scriptedModel({ clerk: [BIG, calls('more', ['l', 'lookup', {}]), 'never reached'] });
    const executor = new CrewExecutor({ crew: approvalCrew(POLICY, { maxRounds: 2 }), model, tools: r.tools });
    const first = await executor.execute('go');
    const done = await executor.execute('', { state: first.state, approvals: [{ id: 'ap-1', approved: true }] });
    expect(done.reason).toBe('max_rounds');
    expect(model.calls).toHaveLength(2);
  });

  it('max_tool_rounds counts a round once, however many pauses it spans', async () => {
    const r = recordingTools();
    const model = scriptedModel({
      clerk: [
        calls('a', ['x', 'refund', { amount: 200 }], ['y', 'refund', { amount: 300 }]),
        calls('b', ['z', 'lookup', {}]),
        calls('c', ['w', 'lookup', {}]),
      ],
    });
    const executor = new CrewExecutor({ crew: approvalCrew(POLICY, { maxToolRounds: 2 }), model, tools: r.tools });
    const first = await executor.execute('go');
    const second = await executor.execute('', { state: first.state, approvals: [{ id: 'ap-1', approved: true }] });
    expect(second.reason).toBe('awaiting_approval');
    const error = await runError(
      executor.execute('', { state: second.state, approvals: [{ id: 'ap-2', approved: true }] }),
    );
    // rounds: 1 (paused twice), 2 (lookup z); the reply asking for a third is the loop
    expect(error.code).toBe('CREW_TOOL_LOOP');
    expect(r.runs).toEqual(['refund:{"amount":200}', 'refund:{"amount":300}', 'lookup:{}']);
  });

  it('handoffs and the agent path go on after the pause', async () => {
    const r = recordingTools();
    const model = scriptedModel({ clerk: ['over to the boss [BOSS]'], boss: [BIG, 'Refunded. [DONE]'] });
    const executor = new CrewExecutor({ crew: approvalCrew(POLICY, { maxHandoffs: 2 }), model, tools: r.tools });
    const first = endOf(await collect(executor, 'go'));
    expect(first).toMatchObject({ reason: 'awaiting_approval', agentId: 'boss', handoffs: 1 });
    expect(first.state.approvals?.batch?.run).toEqual({
      modelCalls: 2,
      handoffs: 1,
      toolRounds: 1,
      path: ['clerk', 'boss'],
    });
    const events = await collect(executor, '', { state: first.state, approvals: [{ id: 'ap-1', approved: true }] });
    const done = endOf(events);
    expect(done).toMatchObject({ reason: 'terminated_by_signal', agentId: 'boss', handoffs: 1 });
    const deltas = eventsOf(events, 'text_delta');
    expect(deltas.length).toBeGreaterThan(0);
    for (const d of deltas) expect(d.path).toEqual(['clerk', 'boss']);
    expect(trace(events).slice(0, 3)).toEqual(['approval_resolved', 'tool_start:refund', 'tool_result:refund']);
  });
});

describe('CrewExecutor approvals: parallel groups', () => {
  it('a call that would need approval in a parallel member is denied with a warning', async () => {
    const r = recordingTools();
    const crew = approvalCrew(
      POLICY,
      {},
      {
        agents: [{ id: 'clerk', tools: ['refund'] }, { id: 'boss', tools: ['refund'] }, { id: 'lead' }],
        routing: {
          signals: {
            lead: [
              { signal: '[BOTH]', target: 'pair' },
              { signal: '[DONE]', target: '' },
            ],
          },
          parallelGroups: { pair: { agents: ['clerk', 'boss'], nextAgent: 'lead' } },
        },
        entryPoint: 'lead',
      },
    );
    const model = scriptedModel({
      lead: ['ask both [BOTH]', 'fine [DONE]'],
      clerk: [calls('c', ['p1', 'refund', { amount: 500 }]), 'clerk done'],
      boss: [calls('b', ['p2', 'refund', { amount: 5 }]), 'boss done'],
    });
    const events = await collect(new CrewExecutor({ crew, model, tools: r.tools }), 'go');
    const done = endOf(events);
    expect(done.reason).toBe('terminated_by_signal');
    expect(r.runs).toEqual(['refund:{"amount":5}']);
    expect(eventsOf(events, 'warning')).toEqual([
      {
        type: 'warning',
        agentId: 'clerk',
        message: expect.stringContaining('unavailable in parallel group "pair"') as string,
      },
    ]);
    const denied = eventsOf(events, 'tool_result').find((e) => e.call.id === 'p1');
    expect(denied).toMatchObject({
      result: 'denied: approval unavailable in a parallel group',
      isError: true,
      group: 'pair',
    });
    expect(eventsOf(events, 'approval_requested')).toEqual([]);
  });
});

describe('CrewExecutor approvals: bad input', () => {
  const executor = new CrewExecutor({
    crew: approvalCrew(POLICY),
    model: scriptedModel({ clerk: [BIG, BIG] }),
    tools: recordingTools().tools,
  });

  it.each([
    ['approvals that are not a list', { approvals: 'yes' }, /Invalid approvals "yes"/],
    ['a decision without an id', { approvals: [{ approved: true }] }, /approvals\[0\]\.id/],
    ['a decision without approved', { approvals: [{ id: 'ap-1' }] }, /approvals\[0\]\.approved/],
    [
      'a reason that is not a string',
      { approvals: [{ id: 'ap-1', approved: false, reason: 3 }] },
      /approvals\[0\]\.reason/,
    ],
    ['a commit that is not a function', { commit: 'save' }, /Invalid commit "save"/],
    [
      'malformed approval state',
      { state: { history: [], approvals: { issued: -1, decided: [] } } },
      /state\.approvals\.issued/,
    ],
    [
      'a batch naming an unknown agent',
      {
        state: {
          history: [],
          approvals: { issued: 1, decided: [], batch: { agentId: 'ghost', message: {}, calls: [], at: 0, run: {} } },
        },
      },
      /state\.approvals\.batch\.agentId "ghost"/,
    ],
  ])('%s: CREW_ARGUMENT_INVALID', async (_label, opts, message) => {
    const error = await runError(executor.execute('go', opts as never));
    expect(error.code).toBe('CREW_ARGUMENT_INVALID');
    expect(error.message).toMatch(message);
  });

  it('resumeAgentId while approvals are pending: CREW_ARGUMENT_INVALID', async () => {
    const first = await executor.execute('go');
    const error = await runError(executor.execute('', { state: first.state, resumeAgentId: 'boss' }));
    expect(error.code).toBe('CREW_ARGUMENT_INVALID');
    expect(error.message).toContain('while approvals are pending');
  });

  it('a batch whose position lies beyond the history: CREW_ARGUMENT_INVALID', async () => {
    const first = roundTrip((await executor.execute('go')).state);
    const error = await runError(executor.execute('', { state: { ...first, history: [] } }));
    expect(error.message).toMatch(/state\.approvals\.batch\.at 1/);
  });
});

describe('crew.yaml approvals:', () => {
  it('is read with snake_case condition keys into CrewConfig.approvals (camelCase, frozen)', () => {
    const crew = parseCrewConfig(`entry_point: a
agents: [{ id: a }]
approvals:
  rules:
    - tool: refund
      when: [{ path: to.email, ends_with: "@example.com" }, { path: amount, lte: 100 }]
      decision: allow
    - { tool: "*", decision: ask, reason: "a person decides" }
  default: deny
`);
    expect(crew.approvals).toEqual({
      rules: [
        {
          tool: 'refund',
          when: [
            { path: 'to.email', endsWith: '@example.com' },
            { path: 'amount', lte: 100 },
          ],
          decision: 'allow',
        },
        { tool: '*', decision: 'ask', reason: 'a person decides' },
      ],
      default: 'deny',
    });
    expect(Object.isFrozen(crew.approvals?.rules?.[0])).toBe(true);
    expect(parseCrewConfig('entry_point: a\nagents: [{ id: a }]\n').approvals).toBeUndefined();
  });

  it('lists every problem of the section with its line', () => {
    let problems: { path: string; line?: number }[] = [];
    try {
      parseCrewConfig(`entry_point: a
agents: [{ id: a }]
approvals:
  rulez: []
  rules:
    - tool: ""
      decision: maybe
    - tool: x
      when:
        - { path: "a..b", gt: 1 }
        - { path: q }
        - { path: q, startsWith: "x" }
      decision: ask
  default: sometimes
`);
    } catch (error) {
      problems = (error as { problems: typeof problems }).problems;
    }
    expect(problems.map((p) => [p.path, p.line])).toEqual([
      ['approvals.rulez', 4],
      ['approvals.rules[0].tool', 6],
      ['approvals.rules[0].decision', 7],
      ['approvals.rules[1].when[0].path', 10],
      ['approvals.rules[1].when[1]', 11],
      ['approvals.rules[1].when[2].startsWith', 12],
      ['approvals.rules[1].when[2]', 12],
      ['approvals.default', 14],
    ]);
  });

  it('a crew written in code takes a camelCase policy, validated the same way', () => {
    const crew = resolveCrewConfig({ ...approvalCrew(POLICY) });
    expect(crew.approvals).toEqual(POLICY);
    let message = '';
    try {
      resolveCrewConfig(
        approvalCrew({ rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', starts_with: 'q' }] }] } as never),
      );
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('approvals.rules[0].when[0].starts_with: unknown key "starts_with"');
    expect(message).toContain('startsWith');
  });
});

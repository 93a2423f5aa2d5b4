// Handoffs as tool calls (handoff_mode: tool | both): what is offered to the model, how a
// transfer call is answered, several transfer calls in one reply, bad arguments, and which
// decides in `both` mode.
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatResponse, Tool, ToolCall } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, type CrewConfigInput, type HandoffMode } from '@signalyard/crew';
import { eventsOf, recordingTools } from './crew-support-approvals.js';
import { collect, endOf, trace } from './crew-support.js';

/** triage → billing (or the investigate group of billing + tech), billing finishes; everyone may look things up. */
function desk(mode: HandoffMode, extra: Partial<CrewConfigInput> = {}): CrewConfigInput {
  return {
    entryPoint: 'triage',
    agents: [
      { id: 'triage', tools: ['lookup'] },
      { id: 'billing', name: 'Billing', description: 'Handles invoices, charges and refunds.', tools: ['lookup'] },
      { id: 'tech' },
    ],
    settings: { handoffMode: mode },
    routing: {
      signals: {
        triage: [
          { signal: '[BILLING]', target: 'billing', description: 'Use it for money questions.' },
          { signal: '[INVESTIGATE]', target: 'investigate' },
          { signal: '[ANSWERED]', target: '' },
        ],
        billing: [{ signal: '[RESOLVED]', target: '', description: 'When the customer has their answer.' }],
        tech: [{ signal: '[RESOLVED]', target: '' }],
      },
      parallelGroups: { investigate: { agents: ['billing', 'tech'], nextAgent: 'billing' } },
    },
    ...extra,
  };
}

/** The desk's tools, for the runs that need none of them to run. */
const TOOLS = recordingTools().tools;
const call = (id: string, name: string, args: unknown = {}): ToolCall => ({ id, name, arguments: args });
const reply = (content: string, ...toolCalls: ToolCall[]): ChatResponse =>
  toolCalls.length === 0 ? { content } : { content, toolCalls };
const toolMessages = (history: readonly ChatMessage[]): [string | undefined, string][] =>
  history.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content]);

describe('transfer tools offered to the model', () => {
  it('each routing signal as a tool after the agent’s own: transfer_to_<agent>, transfer_to_<group>, finish, with descriptions and an optional reason', async () => {
    const { tools } = recordingTools();
    const model = scriptedModel({ triage: [reply('', call('t1', 'finish'))] });
    await new CrewExecutor({ crew: desk('tool'), model, tools }).execute('hi');
    expect(model.calls[0]!.tools).toEqual([
      { name: 'lookup', parameters: { type: 'object' } },
      {
        name: 'transfer_to_billing',
        description:
          'Transfer the conversation to Billing (agent "billing"). Handles invoices, charges and refunds. Use it for money questions.',
        parameters: {
          type: 'object',
          properties: { reason: { type: 'string', description: expect.any(String) } },
          additionalProperties: false,
        },
      },
      {
        name: 'transfer_to_investigate',
        description:
          'Ask the agents "billing", "tech" at once (parallel group "investigate"); their answers come back together.',
        parameters: expect.objectContaining({ type: 'object' }),
      },
      {
        name: 'finish',
        description: 'Finish: your reply is complete and the run ends here.',
        parameters: expect.objectContaining({ type: 'object' }),
      },
    ]);
  });

  it('marker mode offers none; an agent without routing signals gets only its own tools', async () => {
    const { tools } = recordingTools();
    const marker = scriptedModel({ triage: ['[ANSWERED]'] });
    await new CrewExecutor({ crew: desk('marker'), model: marker, tools }).execute('hi');
    expect(marker.calls[0]!.tools?.map((t) => t.name)).toEqual(['lookup']);
    const crew: CrewConfigInput = {
      entryPoint: 'a',
      agents: [{ id: 'a' }, { id: 'b', tools: ['lookup'] }],
      settings: { handoffMode: 'tool' },
      routing: { signals: { a: [{ signal: '[B]', target: 'b' }] }, agentBehaviors: { b: { isTerminal: true } } },
    };
    const model = scriptedModel({ a: [reply('', call('t1', 'transfer_to_b'))], b: ['done'] });
    await new CrewExecutor({ crew, model, tools }).execute('go');
    expect(model.calls.map((c) => c.tools?.map((t) => t.name))).toEqual([['transfer_to_b'], ['lookup']]);
  });

  it('a signal’s own tool name replaces the generated one', async () => {
    const crew: CrewConfigInput = {
      entryPoint: 'a',
      agents: [{ id: 'a' }],
      settings: { handoffMode: 'tool' },
      routing: { signals: { a: [{ signal: '[DONE]', target: '', tool: 'close_case' }] } },
    };
    const model = scriptedModel([reply('Closed.', call('t1', 'close_case'))]);
    const response = await new CrewExecutor({ crew, model, tools: TOOLS }).execute('go');
    expect(model.calls[0]!.tools?.map((t) => t.name)).toEqual(['close_case']);
    expect(response).toMatchObject({ reason: 'terminated_by_signal', signal: '[DONE]', visibleContent: 'Closed.' });
  });
});

describe('a transfer call is the handoff', () => {
  it('answered with a tool message "transferred to <target>", then the target’s turn starts', async () => {
    const model = scriptedModel({
      triage: [reply('Billing will help.', call('t1', 'transfer_to_billing', { reason: 'a charge question' }))],
      billing: [reply('Refunded.', call('t2', 'finish'))],
    });
    const events = await collect(new CrewExecutor({ crew: desk('tool'), model, tools: TOOLS }), 'charged twice');
    const response = endOf(events);
    expect(response).toMatchObject({
      agentId: 'billing',
      content: 'Refunded.',
      visibleContent: 'Refunded.',
      reason: 'terminated_by_signal',
      signal: '[RESOLVED]',
      isTerminal: true,
      handoffs: 1,
    });
    expect(eventsOf(events, 'handoff')).toEqual([
      {
        type: 'handoff',
        from: 'triage',
        to: 'billing',
        via: 'signal',
        signal: '[BILLING]',
        tool: 'transfer_to_billing',
        reason: 'a charge question',
        handoffs: 1,
      },
    ]);
    expect(events.at(-2)).toEqual({
      type: 'terminate',
      agentId: 'billing',
      reason: 'terminated_by_signal',
      signal: '[RESOLVED]',
      tool: 'finish',
    });
    expect(response.state.history).toEqual([
      { role: 'user', content: 'charged twice' },
      {
        role: 'assistant',
        content: 'Billing will help.',
        name: 'triage',
        toolCalls: [call('t1', 'transfer_to_billing', { reason: 'a charge question' })],
      },
      { role: 'tool', content: 'transferred to billing', toolCallId: 't1' },
      { role: 'assistant', content: 'Refunded.', name: 'billing', toolCalls: [call('t2', 'finish')] },
      { role: 'tool', content: 'finished', toolCallId: 't2' },
    ]);
    // Billing sees the whole exchange, the answered call included.
    expect(model.calls[1]!.messages.at(-1)).toEqual({
      role: 'tool',
      content: 'transferred to billing',
      toolCallId: 't1',
    });
    // A transfer is no tool: no tool_start / tool_result, and agent_response lists it apart.
    expect(trace(events).filter((t) => t.startsWith('tool_'))).toEqual([]);
    expect(eventsOf(events, 'agent_response')[0]).toEqual({
      type: 'agent_response',
      agentId: 'triage',
      content: 'Billing will help.',
      transferCalls: [call('t1', 'transfer_to_billing', { reason: 'a charge question' })],
    });
  });

  it('to a parallel group: the group runs, then its next_agent', async () => {
    const model = scriptedModel({
      triage: [reply('Asking both teams.', call('t1', 'transfer_to_investigate'))],
      billing: ['paid up', reply('All clear.', call('t2', 'finish'))],
      tech: ['cache bug'],
    });
    const events = await collect(new CrewExecutor({ crew: desk('tool'), model, tools: TOOLS }), 'it crashed');
    expect(trace(events)).toContain('parallel_start');
    expect(eventsOf(events, 'handoff').map((h) => [h.from, h.to, h.via, h.group])).toEqual([
      ['triage', 'billing', 'parallel', 'investigate'],
      ['triage', 'tech', 'parallel', 'investigate'],
      ['triage', 'billing', 'parallel', undefined],
    ]);
    const response = endOf(events);
    expect(response).toMatchObject({ agentId: 'billing', reason: 'terminated_by_signal', handoffs: 1 });
    expect(toolMessages(response.state.history)).toEqual([
      ['t1', 'transferred to investigate'],
      ['t2', 'finished'],
    ]);
  });

  it('ordinary calls in the same reply run first, and the agent is not called again', async () => {
    const { tools, runs } = recordingTools();
    const model = scriptedModel({
      triage: [reply('Checking, then billing.', call('l1', 'lookup', { id: 7 }), call('t1', 'transfer_to_billing'))],
      billing: [reply('', call('t2', 'finish'))],
    });
    const crew = desk('tool', { settings: { handoffMode: 'tool', maxToolRounds: 1 } });
    const events = await collect(new CrewExecutor({ crew, model, tools }), 'hi');
    expect(runs).toEqual(['lookup:{"id":7}']);
    expect(trace(events)).toEqual([
      'agent_start:triage',
      'agent_response:triage',
      'tool_start:lookup',
      'tool_result:lookup',
      'handoff:triage>billing:signal',
      'agent_start:billing',
      'agent_response:billing',
      'terminate:terminated_by_signal',
      'end',
    ]);
    expect(toolMessages(endOf(events).state.history)).toEqual([
      ['l1', 'lookup ok'],
      ['t1', 'transferred to billing'],
      ['t2', 'finished'],
    ]);
    expect(model.calls.map((c) => c.agentId)).toEqual(['triage', 'billing']);
  });

  it('markers in the text decide nothing in tool mode (the agent falls back)', async () => {
    const model = scriptedModel({ triage: ['Done here [ANSWERED]'], billing: [reply('', call('t1', 'finish'))] });
    const events = await collect(new CrewExecutor({ crew: desk('tool'), model, tools: TOOLS }), 'hi');
    expect(eventsOf(events, 'handoff').map((h) => h.via)).toEqual(['fallback']);
    expect(endOf(events).agentId).toBe('billing');
  });

  it('a transfer that max_handoffs refuses ends the run; the call is still answered', async () => {
    const crew = desk('tool', { settings: { handoffMode: 'tool', maxHandoffs: 1 } });
    const model = scriptedModel({ triage: [reply('To billing.', call('t1', 'transfer_to_billing'))] });
    const response = await new CrewExecutor({ crew, model, tools: TOOLS }).execute('hi');
    expect(response).toMatchObject({ reason: 'max_handoffs', handoffs: 0, agentId: 'triage' });
    expect(toolMessages(response.state.history)).toEqual([['t1', 'transferred to billing']]);
  });

  it('never reaches the executor’s tools: another agent’s own tool of the same name does not run', async () => {
    const ran: string[] = [];
    const finishTool: Tool = {
      name: 'finish',
      parameters: { type: 'object' },
      execute: () => {
        ran.push('finish');
        return Promise.resolve('ran');
      },
    };
    const crew: CrewConfigInput = {
      entryPoint: 'a',
      agents: [{ id: 'a' }, { id: 'b', tools: ['finish'] }],
      settings: { handoffMode: 'tool' },
      routing: { signals: { a: [{ signal: '[DONE]', target: '' }] } },
    };
    const model = scriptedModel([reply('', call('t1', 'finish'))]);
    const response = await new CrewExecutor({ crew, model, tools: [finishTool] }).execute('go');
    expect(response.reason).toBe('terminated_by_signal');
    expect(ran).toEqual([]);
  });
});

describe('several transfer calls in one reply', () => {
  it('the first wins; the others are answered "ignored: another transfer was chosen", with a warning each', async () => {
    const model = scriptedModel({
      triage: [
        reply(
          'Hmm.',
          call('t1', 'transfer_to_billing', { reason: 'money' }),
          call('t2', 'finish'),
          call('t3', 'transfer_to_investigate'),
        ),
      ],
      billing: [reply('', call('t4', 'finish'))],
    });
    const events = await collect(new CrewExecutor({ crew: desk('tool'), model, tools: TOOLS }), 'hi');
    const response = endOf(events);
    expect(response).toMatchObject({ agentId: 'billing', handoffs: 1 });
    expect(toolMessages(response.state.history).slice(0, 3)).toEqual([
      ['t1', 'transferred to billing'],
      ['t2', 'ignored: another transfer was chosen'],
      ['t3', 'ignored: another transfer was chosen'],
    ]);
    expect(eventsOf(events, 'warning').map((w) => w.message)).toEqual([
      'Transfer call "finish" ("t2") of agent "triage": another transfer was chosen, so this one is ignored',
      'Transfer call "transfer_to_investigate" ("t3") of agent "triage": another transfer was chosen, so this one is ignored',
    ]);
    expect(events.some((e) => e.type === 'parallel_start')).toBe(false);
  });

  it('a finish before a transfer ends the run (the order of the calls decides, not the kind)', async () => {
    const model = scriptedModel({
      triage: [reply('Bye.', call('t1', 'finish'), call('t2', 'transfer_to_billing'))],
    });
    const response = await new CrewExecutor({ crew: desk('tool'), model, tools: TOOLS }).execute('hi');
    expect(response).toMatchObject({ reason: 'terminated_by_signal', agentId: 'triage', handoffs: 0 });
    expect(toolMessages(response.state.history)).toEqual([
      ['t1', 'finished'],
      ['t2', 'ignored: another transfer was chosen'],
    ]);
  });
});

describe('a transfer call with bad arguments', () => {
  it('is answered as a tool error and is no handoff: the same agent is called again and may transfer properly', async () => {
    const model = scriptedModel({
      triage: [
        reply('To billing.', call('t1', 'transfer_to_billing', { reason: 42 })),
        reply('To billing, then.', call('t2', 'transfer_to_billing', { reason: 'money' })),
      ],
      billing: [reply('', call('t3', 'finish'))],
    });
    const events = await collect(new CrewExecutor({ crew: desk('tool'), model, tools: TOOLS }), 'hi');
    const response = endOf(events);
    expect(model.calls.map((c) => c.agentId)).toEqual(['triage', 'triage', 'billing']);
    expect(toolMessages(response.state.history)[0]).toEqual([
      't1',
      'Error: invalid arguments for transfer_to_billing: reason must be a string, got 42',
    ]);
    expect(eventsOf(events, 'handoff')).toHaveLength(1);
    expect(eventsOf(events, 'warning').map((w) => w.message)).toEqual([
      'Transfer call "transfer_to_billing" ("t1") of agent "triage": invalid arguments for transfer_to_billing: reason must be a string, got 42; answered as an error, no handoff',
    ]);
    // The model saw the error before trying again.
    expect(model.calls[1]!.messages.at(-1)).toEqual({
      role: 'tool',
      content: 'Error: invalid arguments for transfer_to_billing: reason must be a string, got 42',
      toolCallId: 't1',
    });
  });

  it('a valid transfer after a bad one in the same reply wins', async () => {
    const model = scriptedModel({
      triage: [reply('', call('t1', 'finish', ['not', 'an', 'object']), call('t2', 'transfer_to_billing'))],
      billing: [reply('', call('t3', 'finish', { reason: 'done', extra: 1 })), reply('', call('t4', 'finish', null))],
    });
    const response = await new CrewExecutor({ crew: desk('tool'), model, tools: TOOLS }).execute('hi');
    expect(response).toMatchObject({ agentId: 'billing', reason: 'terminated_by_signal', handoffs: 1 });
    expect(toolMessages(response.state.history)).toEqual([
      ['t1', 'Error: invalid arguments for finish: expected an object { reason?: string }, got ["not","an","object"]'],
      ['t2', 'transferred to billing'],
      ['t3', 'Error: invalid arguments for finish: unknown argument "extra" (expected only "reason")'],
      ['t4', 'finished'],
    ]);
  });

  it('counts as a tool round: a model that keeps sending bad arguments ends in CREW_TOOL_LOOP', async () => {
    const crew = desk('tool', { settings: { handoffMode: 'tool', maxToolRounds: 2 } });
    const model = scriptedModel(() => reply('', call('t', 'finish', 'oops')));
    const events = await collect(new CrewExecutor({ crew, model, tools: TOOLS }), 'hi');
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { code: 'CREW_TOOL_LOOP' } });
    expect(model.calls).toHaveLength(3);
  });
});

describe('handoff_mode: both', () => {
  it('offers the tools and still matches markers', async () => {
    const model = scriptedModel({
      triage: ['Billing will help [BILLING]'],
      billing: [reply('', call('t1', 'finish'))],
    });
    const events = await collect(new CrewExecutor({ crew: desk('both'), model, tools: TOOLS }), 'hi');
    expect(model.calls[0]!.tools?.map((t) => t.name)).toEqual([
      'lookup',
      'transfer_to_billing',
      'transfer_to_investigate',
      'finish',
    ]);
    expect(eventsOf(events, 'handoff')).toEqual([
      { type: 'handoff', from: 'triage', to: 'billing', via: 'signal', signal: '[BILLING]', handoffs: 1 },
    ]);
    expect(endOf(events)).toMatchObject({ reason: 'terminated_by_signal', signal: '[RESOLVED]' });
  });

  it('a marker in the text beats a transfer call of the same reply: the text comes first', async () => {
    const model = scriptedModel({
      triage: [reply('All answered [ANSWERED]', call('t1', 'transfer_to_billing'))],
    });
    const events = await collect(new CrewExecutor({ crew: desk('both'), model, tools: TOOLS }), 'hi');
    const response = endOf(events);
    expect(response).toMatchObject({ reason: 'terminated_by_signal', signal: '[ANSWERED]', agentId: 'triage' });
    expect(events.at(-2)).toEqual({
      type: 'terminate',
      agentId: 'triage',
      reason: 'terminated_by_signal',
      signal: '[ANSWERED]',
    });
    expect(toolMessages(response.state.history)).toEqual([['t1', 'ignored: another transfer was chosen']]);
  });

  it('a transfer call decides when the text has no marker, and termination markers still come before routing ones', async () => {
    const viaTool = scriptedModel({
      triage: [reply('Over to billing.', call('t1', 'transfer_to_billing'))],
      billing: ['[BILLING] and [RESOLVED]'],
    });
    const response = await new CrewExecutor({ crew: desk('both'), model: viaTool, tools: TOOLS }).execute('hi');
    expect(response).toMatchObject({ agentId: 'billing', reason: 'terminated_by_signal', signal: '[RESOLVED]' });
  });
});

import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ToolArgumentsError, defineTool, type ChatResponse, type Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, CrewToolError, type CrewConfigInput } from '@signalyard/crew';
import { collect, endOf, runError, trace } from './crew-support.js';

const crew = (settings: CrewConfigInput['settings'] = {}): CrewConfigInput => ({
  entryPoint: 'clerk',
  agents: [{ id: 'clerk', tools: ['lookup', 'raw'] }, { id: 'boss' }],
  settings,
  routing: {
    signals: {
      clerk: [
        { signal: '[DONE]', target: '' },
        { signal: '[BOSS]', target: 'boss' },
      ],
    },
    agentBehaviors: { boss: { isTerminal: true } },
  },
});

const glossary: Record<string, string> = { signal: 'a text marker', crew: 'agents that hand off' };
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up',
  input: z.object({ word: z.string() }),
  execute: async ({ word }) => ({ word, meaning: glossary[word] ?? null }),
});
const raw: Tool = {
  name: 'raw',
  parameters: { type: 'object' },
  execute: (args) => {
    if (args === 'sync') throw new Error('raw failed synchronously');
    return Promise.reject(new Error('raw failed'));
  },
};

const call = (id: string, name: string, args: unknown): ChatResponse => ({
  content: `calling ${name}`,
  toolCalls: [{ id, name, arguments: args }],
});

describe('CrewExecutor: tools', () => {
  it('runs a defineTool tool, appends its result as a tool message and calls the same agent again', async () => {
    const model = scriptedModel({
      clerk: [call('c1', 'lookup', { word: 'signal' }), 'A signal is a text marker. [DONE]'],
    });
    const events = await collect(new CrewExecutor({ crew: crew(), model, tools: [lookup, raw] }), 'what is a signal?');
    const response = endOf(events);
    expect(response).toMatchObject({
      reason: 'terminated_by_signal',
      handoffs: 0,
      content: 'A signal is a text marker. [DONE]',
    });
    expect(response.state.history).toEqual([
      { role: 'user', content: 'what is a signal?' },
      {
        role: 'assistant',
        content: 'calling lookup',
        name: 'clerk',
        toolCalls: [{ id: 'c1', name: 'lookup', arguments: { word: 'signal' } }],
      },
      { role: 'tool', content: '{"word":"signal","meaning":"a text marker"}', toolCallId: 'c1' },
      { role: 'assistant', content: 'A signal is a text marker. [DONE]', name: 'clerk' },
    ]);
    expect(trace(events)).toEqual([
      'agent_start:clerk',
      'agent_response:clerk',
      'tool_start:lookup',
      'tool_result:lookup',
      'agent_response:clerk',
      'terminate:terminated_by_signal',
      'end',
    ]);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({
      result: { word: 'signal', meaning: 'a text marker' },
      isError: false,
    });
    expect(events.find((e) => e.type === 'agent_response')).toMatchObject({
      toolCalls: [{ id: 'c1', name: 'lookup' }],
    });
    // The agent's tools are offered on each of its requests, as specs.
    expect(model.calls[0]!.tools).toEqual([
      { name: 'lookup', description: 'Look a word up', parameters: lookup.parameters },
      { name: 'raw', parameters: { type: 'object' } },
    ]);
    expect(model.calls[1]!.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'c1' });
  });

  it('answers invalid arguments (ToolArgumentsError) with a tool error message, and the model decides what to do next', async () => {
    const model = scriptedModel({
      clerk: [call('c1', 'lookup', { word: 42 }), call('c2', 'lookup', { word: 'crew' }), 'ok [DONE]'],
    });
    const events = await collect(new CrewExecutor({ crew: crew(), model, tools: [lookup, raw] }), 'go');
    const results = events.filter((e) => e.type === 'tool_result');
    expect(results[0]).toMatchObject({ isError: true, call: { id: 'c1' } });
    expect(results[0]?.type === 'tool_result' && ToolArgumentsError.isInstance(results[0].result)).toBe(true);
    const history = endOf(events).state.history;
    expect(history[2]).toMatchObject({ role: 'tool', toolCallId: 'c1' });
    expect(history[2]!.content).toMatch(/^Error: Invalid arguments for tool "lookup": word: /);
    expect(results[1]).toMatchObject({ isError: false });
  });

  it('answers a tool that rejects, or throws synchronously, with a tool error message', async () => {
    const model = scriptedModel({
      clerk: [
        {
          content: '',
          toolCalls: [
            { id: 'a', name: 'raw', arguments: 'async' },
            { id: 'b', name: 'raw', arguments: 'sync' },
          ],
        },
        '[DONE]',
      ],
    });
    const response = await new CrewExecutor({ crew: crew(), model, tools: [lookup, raw] }).execute('go');
    expect(response.state.history.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', content: 'Error: raw failed', toolCallId: 'a' },
      { role: 'tool', content: 'Error: raw failed synchronously', toolCallId: 'b' },
    ]);
  });

  it('answers a call to a tool the agent does not have with a tool error message naming its tools', async () => {
    const model = scriptedModel({
      clerk: [call('x', 'launch', {}), '[BOSS]'],
      boss: [call('y', 'lookup', { word: 'crew' }), 'fine'],
    });
    const events = await collect(new CrewExecutor({ crew: crew(), model, tools: [lookup, raw] }), 'go');
    const history = endOf(events).state.history;
    expect(history[2]).toEqual({
      role: 'tool',
      content: 'Error: Unknown tool "launch": agent "clerk" has the tools "lookup", "raw"',
      toolCallId: 'x',
    });
    // The boss has no tools: the executor's lookup is not its to call.
    expect(history.find((m) => m.toolCallId === 'y')?.content).toBe(
      'Error: Unknown tool "lookup": agent "boss" has no tools',
    );
    expect(events.filter((e) => e.type === 'tool_result').every((e) => e.type === 'tool_result' && e.isError)).toBe(
      true,
    );
  });

  it('describes a rejection that is not an Error, and offers a tool listed twice once', async () => {
    const odd: Tool = { name: 'odd', parameters: {}, execute: () => Promise.reject('just a string') }; // eslint-disable-line @typescript-eslint/prefer-promise-reject-errors -- the case under test
    const model = scriptedModel({ a: [call('1', 'odd', {}), 'done'] });
    const crewTwice: CrewConfigInput = { entryPoint: 'a', agents: [{ id: 'a', tools: ['odd', 'odd'] }] };
    const response = await new CrewExecutor({ crew: crewTwice, model, tools: [odd] }).execute('go');
    expect(response.state.history[2]!.content).toBe('Error: "just a string"');
    expect(model.calls[0]!.tools).toHaveLength(1);
  });

  it('serialises non-string results as JSON, and what JSON cannot hold with String', async () => {
    const values: unknown[] = ['plain text', 7, undefined, 10n];
    const tool: Tool = { name: 'v', parameters: {}, execute: (args) => Promise.resolve(values[args as number]) };
    const model = scriptedModel({
      a: [{ content: '', toolCalls: values.map((_, i) => ({ id: `t${i}`, name: 'v', arguments: i })) }, 'done'],
    });
    const response = await new CrewExecutor({
      crew: { entryPoint: 'a', agents: [{ id: 'a', tools: ['v'] }] },
      model,
      tools: [tool],
    }).execute('go');
    expect(response.state.history.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'plain text',
      '7',
      'undefined',
      '10',
    ]);
  });

  it('answers a result JSON cannot serialise (BigInt or cycle, null prototype or not) with a tool error message, and the run goes on', async () => {
    const bare = (fields: Record<string, unknown>): object => Object.assign(Object.create(null) as object, fields);
    const cyclic = bare({ name: 'loop' }) as Record<string, unknown>;
    cyclic.self = cyclic;
    const plainCycle: Record<string, unknown> = {};
    plainCycle.self = plainCycle;
    const values: unknown[] = [bare({ id: 1n }), cyclic, { id: 2n }, plainCycle, bare({ ok: true })];
    const tool: Tool = { name: 'v', parameters: {}, execute: (args) => Promise.resolve(values[args as number]) };
    const model = scriptedModel({
      a: [{ content: '', toolCalls: values.map((_, i) => ({ id: `t${i}`, name: 'v', arguments: i })) }, 'done'],
    });
    const events = await collect(
      new CrewExecutor({ crew: { entryPoint: 'a', agents: [{ id: 'a', tools: ['v'] }] }, model, tools: [tool] }),
      'go',
    );
    const response = endOf(events);
    expect(response.content).toBe('done');
    const contents = response.state.history.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(contents.slice(0, 4)).toEqual([
      expect.stringMatching(
        /^Error: Tool "v" of agent "a" returned a result that cannot be sent to the model: .*BigInt/,
      ),
      expect.stringMatching(
        /^Error: Tool "v" of agent "a" returned a result that cannot be sent to the model: .*circular/,
      ),
      expect.stringMatching(/^Error: .*BigInt/),
      expect.stringMatching(/^Error: .*circular/),
    ]);
    expect(contents[4]).toBe('{"ok":true}');
    const results = events.filter((e) => e.type === 'tool_result');
    expect(results.map((e) => e.isError)).toEqual([true, true, true, true, false]);
    for (const e of results.slice(0, 4)) {
      expect(CrewToolError.isInstance(e.result)).toBe(true);
      expect(e.result).toMatchObject({ code: 'CREW_TOOL_RESULT_INVALID', agentId: 'a', toolName: 'v' });
    }
  });

  it('passes the tool the call id, the agent id and the run’s abortSignal', async () => {
    const seen: unknown[] = [];
    const tool: Tool = {
      name: 'spy',
      parameters: {},
      execute: async (_args, ctx) => {
        seen.push({ id: ctx.toolCallId, agent: ctx.agentId, signal: ctx.abortSignal instanceof AbortSignal });
        return 'ok';
      },
    };
    const model = scriptedModel({ a: [call('k', 'spy', {}), 'done'] });
    await new CrewExecutor({
      crew: { entryPoint: 'a', agents: [{ id: 'a', tools: ['spy'] }] },
      model,
      tools: [tool],
    }).execute('go');
    expect(seen).toEqual([{ id: 'k', agent: 'a', signal: true }]);
  });

  it('tool rounds are not handoffs, and an empty toolCalls list is a plain reply', async () => {
    const model = scriptedModel({
      clerk: [call('1', 'lookup', { word: 'a' }), { content: 'no calls [DONE]', toolCalls: [] }],
    });
    const response = await new CrewExecutor({ crew: crew(), model, tools: [lookup, raw] }).execute('go');
    expect(response).toMatchObject({ handoffs: 0, reason: 'terminated_by_signal' });
    expect(response.state.history.at(-1)).toEqual({ role: 'assistant', content: 'no calls [DONE]', name: 'clerk' });
  });

  it('max_tool_rounds: a reply asking for one more round fails the run with CREW_TOOL_LOOP after max_tool_rounds + 1 calls', async () => {
    const model = scriptedModel(() => call('again', 'lookup', { word: 'signal' }));
    const executor = new CrewExecutor({ crew: crew({ maxToolRounds: 2 }), model, tools: [lookup, raw] });
    const events = await collect(executor, 'go');
    const last = events.at(-1);
    expect(last).toMatchObject({ type: 'error', error: { code: 'CREW_TOOL_LOOP', agentId: 'clerk' } });
    expect(model.calls).toHaveLength(3);
    // The refused calls are answered in the state, so it stays valid for the next run.
    const history = last?.type === 'error' ? last.state.history : [];
    expect(history.at(-1)).toEqual({
      role: 'tool',
      content: 'Error: not run: agent "clerk" reached max_tool_rounds (2)',
      toolCallId: 'again',
    });
    expect(history.filter((m) => m.role === 'tool')).toHaveLength(3);
    const error = await runError(
      new CrewExecutor({
        crew: crew({ maxToolRounds: 2 }),
        model: scriptedModel(() => call('z', 'raw', 1)),
        tools: [lookup, raw],
      }).execute('go'),
    );
    expect(error.code).toBe('CREW_TOOL_LOOP');
    expect(error.message).toContain('max_tool_rounds is 2');
  });

  it('tool rounds count toward max_rounds', async () => {
    const model = scriptedModel(() => call('again', 'lookup', { word: 'signal' }));
    const response = await new CrewExecutor({
      crew: crew({ maxRounds: 3, maxToolRounds: 10 }),
      model,
      tools: [lookup, raw],
    }).execute('go');
    expect(response).toMatchObject({ reason: 'max_rounds', agentId: 'clerk', content: 'calling lookup' });
    expect(model.calls).toHaveLength(3);
  });

  it('never sends a tool result without the assistant message that asked for it when trimming the history', async () => {
    const model = scriptedModel({
      clerk: [
        {
          content: 'two calls',
          toolCalls: [
            { id: '1', name: 'lookup', arguments: { word: 'a' } },
            { id: '2', name: 'lookup', arguments: { word: 'b' } },
          ],
        },
        'x [DONE]',
      ],
    });
    await new CrewExecutor({ crew: crew({ maxHistoryMessages: 2 }), model, tools: [lookup, raw] }).execute('go');
    // The last two messages are both tool results, whose assistant message falls outside the
    // window: rather than send nothing, the whole tool-call group is kept (one over the limit).
    expect(model.calls[1]!.messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'tool']);
    expect(model.calls[1]!.messages[0]?.toolCalls?.map((c) => c.id)).toEqual(['1', '2']);
    const wider = scriptedModel({ clerk: [call('1', 'lookup', { word: 'a' }), 'x [DONE]'] });
    await new CrewExecutor({ crew: crew({ maxHistoryMessages: 2 }), model: wider, tools: [lookup, raw] }).execute('go');
    expect(wider.calls[1]!.messages.map((m) => m.role)).toEqual(['assistant', 'tool']);
  });
});

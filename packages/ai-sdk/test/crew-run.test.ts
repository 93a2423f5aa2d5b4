import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { AbortedError, defineTool } from '@signalyard/core';
import { CrewExecutor, CrewRunError, parseCrewConfig, type CrewEvent } from '@signalyard/crew';
import { MockLanguageModelV3 } from 'ai/test';
import { ModelCallError, aiSdkModel } from '@signalyard/ai-sdk';
import {
  deferred,
  mockModel,
  mockStreamModel,
  rejectionOf,
  reply,
  streamParts,
  toolCallPart,
  type GenerateResult,
} from './support.js';

const crew = parseCrewConfig(
  `
entry_point: clerk
agents:
  - id: clerk
    system_prompt: You are the clerk. Look words up, then pass to the editor.
    tools: [lookup]
  - id: editor
    system_prompt: You are the editor.
routing:
  signals:
    clerk:
      - { signal: "[ROUTE_EDITOR]", target: editor }
    editor:
      - { signal: "[DONE]", target: "" }
`,
  { file: 'crew.yaml' },
);

const glossary: Record<string, string> = { signal: 'a text marker' };
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up in the glossary',
  input: z.object({ word: z.string() }),
  execute: async ({ word }) => ({ word, meaning: glossary[word] ?? null }),
});

describe('a crew run on the adapter', () => {
  it('runs a tool round, routes on a marker in the reply and hands off, all through the AI SDK', async () => {
    const mock = mockModel(
      reply([toolCallPart('call-1', 'lookup', { word: 'signal' })], { input: 40, output: 8 }),
      reply('A signal is a text marker. [ROUTE_EDITOR]'),
      reply('Approved. [DONE]'),
    );
    const executor = new CrewExecutor({ crew, model: aiSdkModel(mock), tools: [lookup] });
    const events: CrewEvent[] = [];
    // The run's events without text deltas: the provider is called through doGenerate.
    for await (const event of executor.executeStream('What is a signal?', { textDeltas: false })) events.push(event);

    const end = events.at(-1);
    expect(end?.type).toBe('end');
    if (end?.type !== 'end') return;
    expect(end.response).toMatchObject({
      reason: 'terminated_by_signal',
      isTerminal: true,
      handoffs: 1,
      agentId: 'editor',
      content: 'Approved. [DONE]',
    });
    expect(events.filter((e) => e.type === 'handoff')).toEqual([
      { type: 'handoff', from: 'clerk', to: 'editor', via: 'signal', signal: '[ROUTE_EDITOR]', handoffs: 1 },
    ]);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({
      agentId: 'clerk',
      call: { id: 'call-1', name: 'lookup', arguments: { word: 'signal' } },
      result: { word: 'signal', meaning: 'a text marker' },
      isError: false,
    });

    // What the provider received, call by call.
    expect(mock.doGenerateCalls).toHaveLength(3);
    const [first, second, third] = mock.doGenerateCalls;
    expect(first!.prompt).toEqual([
      { role: 'system', content: 'You are the clerk. Look words up, then pass to the editor.' },
      { role: 'user', content: [{ type: 'text', text: 'What is a signal?' }] },
    ]);
    expect(first!.tools).toEqual([
      {
        type: 'function',
        name: 'lookup',
        description: 'Look a word up in the glossary',
        inputSchema: expect.objectContaining({
          type: 'object',
          properties: { word: { type: 'string' } },
          required: ['word'],
        }),
      },
    ]);
    expect(second!.prompt.slice(2)).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'lookup', input: { word: 'signal' } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call-1',
            toolName: 'lookup',
            output: { type: 'text', value: '{"word":"signal","meaning":"a text marker"}' },
          },
        ],
      },
    ]);
    expect(third!.prompt[0]).toEqual({ role: 'system', content: 'You are the editor.' });
    expect(third!.prompt.at(-1)).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'A signal is a text marker. [ROUTE_EDITOR]' }],
    });
    expect(third!.tools).toBeUndefined();
    expect(end.response.state.history.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'assistant',
    ]);
  });

  it('streams a run through the provider’s stream: text deltas with the markers hidden, the same handoff', async () => {
    const mock = mockStreamModel(
      streamParts(['A signal is ', 'a text marker. [ROUTE_', 'EDITOR]']),
      streamParts(['Approved. [DO', 'NE]']),
    );
    const executor = new CrewExecutor({ crew, model: aiSdkModel(mock), tools: [lookup] });
    const events: CrewEvent[] = [];
    for await (const event of executor.executeStream('What is a signal?')) events.push(event);

    const deltas = events.flatMap((e) => (e.type === 'text_delta' ? [`${e.path.join('>')}: ${e.delta}`] : []));
    expect(deltas.join('|')).toBe('clerk: A signal is|clerk:  a text marker.|clerk>editor: Approved.');
    expect(events.filter((e) => e.type === 'handoff')).toEqual([
      { type: 'handoff', from: 'clerk', to: 'editor', via: 'signal', signal: '[ROUTE_EDITOR]', handoffs: 1 },
    ]);
    const end = events.at(-1);
    expect(end?.type === 'end' && end.response).toMatchObject({
      reason: 'terminated_by_signal',
      content: 'Approved. [DONE]',
      visibleContent: 'Approved.',
    });
    expect([mock.doStreamCalls.length, mock.doGenerateCalls.length]).toEqual([2, 0]);
  });

  it('works with one adapter per agent', async () => {
    const clerk = mockModel(reply('Nothing to look up. [ROUTE_EDITOR]'));
    const editor = mockModel(reply('Fine. [DONE]'));
    const executor = new CrewExecutor({
      crew,
      model: { clerk: aiSdkModel(clerk), editor: aiSdkModel(editor, { temperature: 0 }) },
      tools: [lookup],
    });
    const response = await executor.execute('Anything?');
    expect(response).toMatchObject({ reason: 'terminated_by_signal', handoffs: 1 });
    expect([clerk.doGenerateCalls.length, editor.doGenerateCalls.length]).toEqual([1, 1]);
    expect(editor.doGenerateCalls[0]!.temperature).toBe(0);
  });

  it('answers invalid tool arguments with a tool error the model sees, and the model retries', async () => {
    const mock = mockModel(
      reply([toolCallPart('bad', 'lookup', { word: 42 })]),
      reply([toolCallPart('good', 'lookup', { word: 'signal' })]),
      reply('Got it. [ROUTE_EDITOR]'),
      reply('[DONE]'),
    );
    const response = await new CrewExecutor({ crew, model: aiSdkModel(mock), tools: [lookup] }).execute(
      'Define signal',
    );
    expect(response.reason).toBe('terminated_by_signal');
    const toolResult = mock.doGenerateCalls[1]!.prompt.at(-1);
    expect(toolResult).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'bad', toolName: 'lookup', output: { type: 'text' } }],
    });
    expect(JSON.stringify(toolResult)).toContain('Invalid arguments for tool \\"lookup\\"');
  });

  it('fails the run with CREW_AGENT_FAILED whose cause is the ModelCallError, keeping the history', async () => {
    const mock = new MockLanguageModelV3({ doGenerate: () => Promise.reject(new Error('503 Service Unavailable')) });
    const error = await rejectionOf(
      new CrewExecutor({ crew, model: aiSdkModel(mock, { maxRetries: 0 }), tools: [lookup] }).execute('hi'),
    );
    expect(CrewRunError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CREW_AGENT_FAILED', agentId: 'clerk' });
    expect(ModelCallError.isInstance((error as CrewRunError).cause)).toBe(true);
    expect((error as CrewRunError).state.history).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('aborts the provider call when the run is aborted', async () => {
    const started = deferred<AbortSignal | undefined>();
    const mock = new MockLanguageModelV3({
      doGenerate: ({ abortSignal }) => {
        started.resolve(abortSignal);
        return new Promise<GenerateResult>(() => undefined);
      },
    });
    const controller = new AbortController();
    const run = new CrewExecutor({ crew, model: aiSdkModel(mock), tools: [lookup] }).execute('hi', {
      abortSignal: controller.signal,
    });
    const providerSignal = await started.promise;
    controller.abort();
    const error = await rejectionOf(run);
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect(AbortedError.isInstance((error as Error).cause)).toBe(true);
    expect(providerSignal?.aborted).toBe(true);
  });
});

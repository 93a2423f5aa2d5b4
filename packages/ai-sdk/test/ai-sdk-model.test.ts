import { describe, expect, expectTypeOf, it } from 'vitest';
import { ConfigError, type ChatModel, type ChatRequest } from '@signalyard/core';
import type { LanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { aiSdkModel, type AiSdkModelOptions } from '@signalyard/ai-sdk';
import { mockModel, reply, toolCallPart } from './support.js';

const ask: ChatRequest = { messages: [{ role: 'user', content: 'Define signal' }] };

describe('aiSdkModel: replies', () => {
  it('returns the reply text and the token usage', async () => {
    const response = await aiSdkModel(mockModel(reply('A text marker.', { input: 12, output: 4 }))).generate(ask);
    expect(response).toEqual({ content: 'A text marker.', usage: { inputTokens: 12, outputTokens: 4 } });
  });

  it('leaves toolCalls out of a reply that calls no tool', async () => {
    const response = await aiSdkModel(mockModel(reply('plain'))).generate(ask);
    expect(response).not.toHaveProperty('toolCalls');
  });

  it('returns the model’s tool calls as ToolCalls, in order, with parsed arguments', async () => {
    const mock = mockModel(
      reply([
        { type: 'text', text: 'Let me check.' },
        toolCallPart('call-1', 'lookup', { word: 'signal' }),
        toolCallPart('call-2', 'lookup', { word: 'crew' }),
      ]),
    );
    const response = await aiSdkModel(mock).generate({
      ...ask,
      tools: [{ name: 'lookup', parameters: { type: 'object' } }],
    });
    expect(response.content).toBe('Let me check.');
    expect(response.toolCalls).toEqual([
      { id: 'call-1', name: 'lookup', arguments: { word: 'signal' } },
      { id: 'call-2', name: 'lookup', arguments: { word: 'crew' } },
    ]);
  });

  it('returns an empty content for a reply with only tool calls', async () => {
    const response = await aiSdkModel(mockModel(reply([toolCallPart('c', 'lookup', {})]))).generate({
      ...ask,
      tools: [{ name: 'lookup', parameters: { type: 'object' } }],
    });
    expect(response).toMatchObject({ content: '', toolCalls: [{ id: 'c', name: 'lookup', arguments: {} }] });
  });

  it('hands back a call to a tool that was not offered, for Signalyard to answer with a tool error', async () => {
    const response = await aiSdkModel(
      mockModel(reply([toolCallPart('c', 'delete_everything', { all: true })])),
    ).generate({
      ...ask,
      tools: [{ name: 'lookup', parameters: { type: 'object' } }],
    });
    expect(response.toolCalls).toEqual([{ id: 'c', name: 'delete_everything', arguments: { all: true } }]);
  });

  it('hands back arguments that are not JSON as the raw text, and does not validate them against the schema', async () => {
    const tools = [
      { name: 'lookup', parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } },
    ];
    const response = await aiSdkModel(
      mockModel(reply([toolCallPart('c1', 'lookup', '{"word": '), toolCallPart('c2', 'lookup', { word: 7 })])),
    ).generate({
      ...ask,
      tools,
    });
    expect(response.toolCalls).toEqual([
      { id: 'c1', name: 'lookup', arguments: '{"word": ' },
      { id: 'c2', name: 'lookup', arguments: { word: 7 } },
    ]);
  });

  it('leaves out tool calls the provider executed itself', async () => {
    const mock = mockModel(
      reply([
        {
          type: 'tool-call',
          toolCallId: 'p',
          toolName: 'web_search',
          input: '{}',
          providerExecuted: true,
          dynamic: true,
        },
        { type: 'tool-result', toolCallId: 'p', toolName: 'web_search', result: { hits: 0 }, dynamic: true },
        { type: 'text', text: 'Nothing found.' },
      ]),
    );
    const response = await aiSdkModel(mock).generate(ask);
    expect(response).toEqual({ content: 'Nothing found.', usage: { inputTokens: 10, outputTokens: 5 } });
  });

  it('reports only the token counts the provider gives, and no usage when it gives none', async () => {
    expect((await aiSdkModel(mockModel(reply('x', { input: 3 }))).generate(ask)).usage).toEqual({ inputTokens: 3 });
    expect((await aiSdkModel(mockModel(reply('x', { output: 2 }))).generate(ask)).usage).toEqual({ outputTokens: 2 });
    expect(await aiSdkModel(mockModel(reply('x', {}))).generate(ask)).toEqual({ content: 'x' });
  });

  it('makes one model call per generate, even when the model asks for tools (Signalyard runs them)', async () => {
    const mock = mockModel(reply([toolCallPart('c', 'lookup', {})]), reply('second call'));
    await aiSdkModel(mock).generate({ ...ask, tools: [{ name: 'lookup', parameters: { type: 'object' } }] });
    expect(mock.doGenerateCalls).toHaveLength(1);
  });

  it('is reusable: every generate is an independent call', async () => {
    const mock = mockModel(reply('one'), reply('two'));
    const model = aiSdkModel(mock);
    expect((await model.generate(ask)).content).toBe('one');
    expect((await model.generate(ask)).content).toBe('two');
  });
});

describe('aiSdkModel: tools offered to the model', () => {
  it('sends each ToolSpec as a function tool with its name, description and JSON Schema', async () => {
    const mock = mockModel(reply('ok'));
    const parameters = {
      type: 'object',
      properties: { word: { type: 'string', description: 'the word' } },
      required: ['word'],
      additionalProperties: false,
    };
    await aiSdkModel(mock).generate({
      ...ask,
      tools: [
        { name: 'lookup', description: 'Look a word up', parameters },
        { name: 'now', parameters: { type: 'object', properties: {} } },
      ],
    });
    const call = mock.doGenerateCalls[0]!;
    expect(call.tools).toEqual([
      { type: 'function', name: 'lookup', description: 'Look a word up', inputSchema: parameters },
      { type: 'function', name: 'now', inputSchema: { type: 'object', properties: {} } },
    ]);
    expect(call.toolChoice).toEqual({ type: 'auto' });
  });

  it('sends no tools when the request has none or an empty list', async () => {
    const mock = mockModel(reply('ok'), reply('ok'));
    const model = aiSdkModel(mock);
    await model.generate(ask);
    await model.generate({ ...ask, tools: [] });
    expect(mock.doGenerateCalls.map((c) => c.tools)).toEqual([undefined, undefined]);
  });

  it('accepts a tool named like an Object.prototype member', async () => {
    const mock = mockModel(reply([toolCallPart('c', 'constructor', {})]));
    const response = await aiSdkModel(mock).generate({
      ...ask,
      tools: [{ name: 'constructor', parameters: { type: 'object' } }],
    });
    expect(mock.doGenerateCalls[0]!.tools).toMatchObject([{ name: 'constructor' }]);
    expect(response.toolCalls).toEqual([{ id: 'c', name: 'constructor', arguments: {} }]);
  });
});

describe('aiSdkModel: options', () => {
  it('passes maxOutputTokens, temperature and providerOptions to every call', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock, {
      maxOutputTokens: 256,
      temperature: 0,
      providerOptions: { openai: { reasoningEffort: 'low' } },
    }).generate(ask);
    expect(mock.doGenerateCalls[0]).toMatchObject({
      maxOutputTokens: 256,
      temperature: 0,
      providerOptions: { openai: { reasoningEffort: 'low' } },
    });
  });

  it('sends no settings it was not given', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock).generate(ask);
    expect(mock.doGenerateCalls[0]).toMatchObject({
      maxOutputTokens: undefined,
      temperature: undefined,
      providerOptions: undefined,
    });
  });

  it('copies the options: changing them afterwards does not change later calls', async () => {
    const mock = mockModel(reply('ok'));
    const opts = { temperature: 0.2, providerOptions: { openai: { user: 'a' } } };
    const model = aiSdkModel(mock, opts);
    opts.temperature = 1;
    opts.providerOptions.openai.user = 'b';
    await model.generate(ask);
    expect(mock.doGenerateCalls[0]).toMatchObject({ temperature: 0.2, providerOptions: { openai: { user: 'a' } } });
  });

  it('keeps a "__proto__" provider key as a key', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock, { providerOptions: JSON.parse('{"__proto__":{"a":1},"openai":{"b":2}}') as never }).generate(
      ask,
    );
    const sent = mock.doGenerateCalls[0]!.providerOptions!;
    expect(Object.keys(sent)).toEqual(['__proto__', 'openai']);
    expect(Object.getPrototypeOf(sent)).toBe(Object.prototype);
  });

  it('accepts a model id string (resolved by the AI SDK’s global provider at call time)', () => {
    expect(() => aiSdkModel('openai/gpt-4o-mini')).not.toThrow();
  });

  it('rejects a bad model and bad options with one ConfigError listing every problem', () => {
    let error: unknown;
    try {
      aiSdkModel(
        { modelId: 'x' } as never,
        {
          temperature: -1,
          maxOutputTokens: 1.5,
          maxRetries: -1,
          providerOptions: { openai: 3 },
          temprature: 1,
        } as never,
      );
    } catch (e) {
      error = e;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => p.path)).toEqual([
      'model',
      'temprature',
      'providerOptions.openai',
      'maxOutputTokens',
      'temperature',
      'maxRetries',
    ]);
    expect(problems[0]!.message).toContain('{"modelId":"x"}');
    expect(problems[1]!.message).toContain('unknown option "temprature"');
    expect(problems[3]!.message).toContain('1.5');
    expect(problems[4]!.message).toContain('-1');
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
  });

  it.each([
    ['an empty model id', '', undefined, 'model'],
    ['no model', undefined, undefined, 'model'],
    [
      'an AI SDK 4 (v1) model',
      { specificationVersion: 'v1', provider: 'old', modelId: 'm', doGenerate: () => undefined },
      undefined,
      'model',
    ],
    ['options that are not an object', new MockLanguageModelV3(), 'fast', 'opts'],
    ['providerOptions that are not an object', new MockLanguageModelV3(), { providerOptions: [] }, 'providerOptions'],
    ['a temperature that is not a number', new MockLanguageModelV3(), { temperature: '0.5' }, 'temperature'],
    ['an infinite temperature', new MockLanguageModelV3(), { temperature: Infinity }, 'temperature'],
    ['maxOutputTokens of 0', new MockLanguageModelV3(), { maxOutputTokens: 0 }, 'maxOutputTokens'],
    ['a fractional maxRetries', new MockLanguageModelV3(), { maxRetries: 0.5 }, 'maxRetries'],
  ])('rejects %s with CONFIG_INVALID at %s', (_name, model, opts, path) => {
    expect(() => aiSdkModel(model as never, opts as never)).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', problems: [expect.objectContaining({ path })] }),
    );
  });
});

describe('aiSdkModel: types', () => {
  it('takes any AI SDK LanguageModel and returns a ChatModel', () => {
    expectTypeOf(aiSdkModel).parameter(0).toEqualTypeOf<LanguageModel>();
    expectTypeOf(aiSdkModel).parameter(1).toEqualTypeOf<AiSdkModelOptions | undefined>();
    expectTypeOf(aiSdkModel).returns.toEqualTypeOf<ChatModel>();
    expectTypeOf<AiSdkModelOptions>().toHaveProperty('providerOptions');
    expectTypeOf<AiSdkModelOptions['maxOutputTokens']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<AiSdkModelOptions['temperature']>().toEqualTypeOf<number | undefined>();
  });
});

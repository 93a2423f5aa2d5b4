import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AbortedError, type ChatModel, type ChatRequest, type ChatStreamPart } from '@signalyard/core';
import { APICallError, simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { ModelCallError, ModelRequestError, aiSdkModel } from '@signalyard/ai-sdk';
import { collect } from '@signalyard/test-utils';
import {
  deferred,
  manualStream,
  mockModel,
  mockStreamModel,
  readableOf,
  rejectionOf,
  reply,
  streamParts,
  toolCallPart,
  type StreamPart,
} from './support.js';

const ask = (abortSignal?: AbortSignal): ChatRequest =>
  abortSignal === undefined
    ? { messages: [{ role: 'user', content: 'Define signal' }] }
    : { messages: [{ role: 'user', content: 'Define signal' }], abortSignal };

const lookupTool = { name: 'lookup', parameters: { type: 'object', properties: { word: { type: 'string' } } } };

const streamOf = (model: ChatModel, request: ChatRequest): AsyncIterable<ChatStreamPart> => {
  if (model.stream === undefined) throw new Error('expected the model to stream');
  return model.stream(request);
};

/** The rules core's `streamChat` checks on every model stream. */
function expectValidStream(parts: readonly ChatStreamPart[]): void {
  const finish = parts.at(-1);
  expect(finish?.type).toBe('finish');
  if (finish?.type !== 'finish') return;
  expect(parts.filter((p) => p.type === 'finish')).toHaveLength(1);
  const deltas = parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : []));
  expect(deltas.every((d) => d !== '')).toBe(true);
  expect(deltas.join('')).toBe(finish.response.content);
  const calls = parts.flatMap((p) => (p.type === 'tool-call' ? [p.call] : []));
  expect(calls).toEqual(finish.response.toolCalls ?? []);
}

describe('aiSdkModel().stream: replies', () => {
  it('streams the text delta by delta, then one finish with the whole response and usage', async () => {
    const mock = mockStreamModel(streamParts(['A text ', 'mar', 'ker.'], { tokens: { input: 12, output: 4 } }));
    const parts = await collect(streamOf(aiSdkModel(mock), ask()));
    expect(parts).toEqual([
      { type: 'text-delta', delta: 'A text ' },
      { type: 'text-delta', delta: 'mar' },
      { type: 'text-delta', delta: 'ker.' },
      {
        type: 'finish',
        response: { content: 'A text marker.', usage: { inputTokens: 12, outputTokens: 4 } },
      },
    ]);
    expectValidStream(parts);
    expect(mock.doStreamCalls).toHaveLength(1);
  });

  it('streams a reply simulated with the AI SDK’s simulateReadableStream', async () => {
    const mock = new MockLanguageModelV3({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: streamParts(['A text ', 'marker.']).slice(1),
          chunkDelayInMs: null,
          initialDelayInMs: null,
        }),
      }),
    });
    const parts = await collect(streamOf(aiSdkModel(mock), ask()));
    expect(parts.map((p) => (p.type === 'text-delta' ? p.delta : p.type))).toEqual(['A text ', 'marker.', 'finish']);
    expectValidStream(parts);
  });

  it('leaves out empty text deltas', async () => {
    const mock = mockStreamModel(streamParts(['', 'Hi', '', '!']));
    const parts = await collect(streamOf(aiSdkModel(mock), ask()));
    expect(parts.filter((p) => p.type === 'text-delta')).toEqual([
      { type: 'text-delta', delta: 'Hi' },
      { type: 'text-delta', delta: '!' },
    ]);
    expectValidStream(parts);
  });

  it('streams an empty reply as a single finish with empty content', async () => {
    const parts = await collect(streamOf(aiSdkModel(mockStreamModel(streamParts([], { tokens: {} }))), ask()));
    expect(parts).toEqual([{ type: 'finish', response: { content: '' } }]);
  });

  it('yields a tool-call part per complete call, with parsed arguments, and the same calls in finish', async () => {
    const mock = mockStreamModel(
      streamParts(['Let me ', 'check.'], {
        toolCalls: [
          { id: 'call-1', name: 'lookup', input: { word: 'signal' } },
          { id: 'call-2', name: 'lookup', input: '{"word": ' },
          { id: 'call-3', name: 'delete_everything', input: { all: true } },
        ],
      }),
    );
    const parts = await collect(streamOf(aiSdkModel(mock), { ...ask(), tools: [lookupTool] }));
    expect(parts.filter((p) => p.type === 'tool-call')).toEqual([
      { type: 'tool-call', call: { id: 'call-1', name: 'lookup', arguments: { word: 'signal' } } },
      // Not JSON: the raw text, for Signalyard to answer with a tool error (as generate does).
      { type: 'tool-call', call: { id: 'call-2', name: 'lookup', arguments: '{"word": ' } },
      // A tool that was not offered comes back too.
      { type: 'tool-call', call: { id: 'call-3', name: 'delete_everything', arguments: { all: true } } },
    ]);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      response: {
        content: 'Let me check.',
        toolCalls: [
          { id: 'call-1', name: 'lookup', arguments: { word: 'signal' } },
          { id: 'call-2', name: 'lookup', arguments: '{"word": ' },
          { id: 'call-3', name: 'delete_everything', arguments: { all: true } },
        ],
        usage: { inputTokens: 10, outputTokens: 5 },
      },
    });
    expectValidStream(parts);
  });

  it('leaves out tool calls the provider executed itself', async () => {
    const parts: StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      {
        type: 'tool-call',
        toolCallId: 'p',
        toolName: 'web_search',
        input: '{}',
        providerExecuted: true,
        dynamic: true,
      },
      { type: 'tool-result', toolCallId: 'p', toolName: 'web_search', result: { hits: 0 }, dynamic: true },
      ...streamParts(['Nothing found.']).slice(1),
    ];
    const out = await collect(streamOf(aiSdkModel(mockStreamModel(parts)), ask()));
    expect(out.some((p) => p.type === 'tool-call')).toBe(false);
    expect(out.at(-1)).toEqual({
      type: 'finish',
      response: { content: 'Nothing found.', usage: { inputTokens: 10, outputTokens: 5 } },
    });
  });

  it('returns the same response as generate for the same provider reply', async () => {
    const request: ChatRequest = { ...ask(), tools: [lookupTool] };
    const generated = await aiSdkModel(
      mockModel(reply([{ type: 'text', text: 'Checking.' }, toolCallPart('c1', 'lookup', { word: 'crew' })])),
    ).generate(request);
    const streamed = await collect(
      streamOf(
        aiSdkModel(
          mockStreamModel(
            streamParts(['Check', 'ing.'], { toolCalls: [{ id: 'c1', name: 'lookup', input: { word: 'crew' } }] }),
          ),
        ),
        request,
      ),
    );
    expect(streamed.at(-1)).toEqual({ type: 'finish', response: generated });
  });

  it('sends the same prompt, tools and settings as generate', async () => {
    const request: ChatRequest = {
      messages: [
        { role: 'system', content: 'You are the clerk.' },
        { role: 'user', content: 'Define signal' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: { word: 'signal' } }] },
        { role: 'tool', content: 'a text marker', toolCallId: 'c1' },
      ],
      tools: [lookupTool],
    };
    const opts = { temperature: 0, maxOutputTokens: 64, providerOptions: { openai: { user: 'u1' } } };
    const generating = mockModel(reply('ok'));
    await aiSdkModel(generating, opts).generate(request);
    const streaming = mockStreamModel(streamParts(['ok']));
    await collect(streamOf(aiSdkModel(streaming, opts), request));
    const sent = generating.doGenerateCalls[0]!;
    expect(streaming.doStreamCalls[0]).toMatchObject({
      prompt: sent.prompt,
      tools: sent.tools,
      toolChoice: sent.toolChoice,
      temperature: 0,
      maxOutputTokens: 64,
      providerOptions: { openai: { user: 'u1' } },
    });
  });

  it('makes one single-step call even when the model asks for tools', async () => {
    const mock = mockStreamModel(
      streamParts([], { toolCalls: [{ id: 'c', name: 'lookup', input: {} }] }),
      streamParts(['second call']),
    );
    await collect(streamOf(aiSdkModel(mock), { ...ask(), tools: [lookupTool] }));
    expect(mock.doStreamCalls).toHaveLength(1);
  });

  // A CPU-bound property run: on a busy 2-core machine it can take more than vitest's default
  // 5 s (a time limit, not a timing assertion).
  it('keeps the stream invariants for any text split into any deltas (property)', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ maxLength: 8 }), { maxLength: 12 }),
        fc.array(fc.record({ id: fc.uuid(), word: fc.string() }), { maxLength: 3 }),
        async (chunks, calls) => {
          const mock = mockStreamModel(
            streamParts(chunks, {
              toolCalls: calls.map((c) => ({ id: c.id, name: 'lookup', input: { word: c.word } })),
            }),
          );
          const parts = await collect(streamOf(aiSdkModel(mock), { ...ask(), tools: [lookupTool] }));
          expectValidStream(parts);
          const finish = parts.at(-1);
          expect(finish?.type === 'finish' ? finish.response.content : undefined).toBe(chunks.join(''));
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('aiSdkModel().stream: errors', () => {
  it('rejects with ModelCallError when the provider reports an error mid-stream, after the deltas before it', async () => {
    const failure = new APICallError({
      message: 'HTTP 500',
      url: 'https://api.example.test/v1/chat',
      requestBodyValues: {},
      statusCode: 500,
      isRetryable: false,
    });
    const parts: StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hel' },
      { type: 'error', error: failure },
      { type: 'text-delta', id: 't', delta: 'lo' },
      { type: 'text-end', id: 't' },
      ...streamParts([]).slice(1),
    ];
    const seen: ChatStreamPart[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const part of streamOf(aiSdkModel(mockStreamModel(parts)), ask())) seen.push(part);
      })(),
    );
    expect(seen).toEqual([{ type: 'text-delta', delta: 'Hel' }]);
    expect(ModelCallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'MODEL_CALL_FAILED',
      cause: failure,
      statusCode: 500,
      model: '"mock-model" (mock-provider)',
    });
  });

  it('rejects with ModelCallError when the provider call itself fails', async () => {
    const failure = new Error('socket hang up');
    const mock = new MockLanguageModelV3({ doStream: () => Promise.reject(failure) });
    const error = await rejectionOf(collect(streamOf(aiSdkModel(mock, { maxRetries: 0 }), ask())));
    expect(error).toMatchObject({ code: 'MODEL_CALL_FAILED', cause: failure });
    expect(mock.doStreamCalls).toHaveLength(1);
  });

  it('rejects with ModelCallError when the provider stream itself errors', async () => {
    const failure = new Error('connection reset');
    const mock = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'stream-start', warnings: [] });
            controller.error(failure);
          },
        }),
      }),
    });
    const error = await rejectionOf(collect(streamOf(aiSdkModel(mock), ask())));
    expect(error).toMatchObject({ code: 'MODEL_CALL_FAILED', cause: failure });
  });

  it('rejects a malformed request with ModelRequestError on the first next(), calling nothing', async () => {
    const mock = mockStreamModel(streamParts(['never']));
    const error = await rejectionOf(collect(streamOf(aiSdkModel(mock), { messages: [] })));
    expect(ModelRequestError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'MODEL_REQUEST_INVALID', path: 'messages' });
    const junk = await rejectionOf(collect(streamOf(aiSdkModel(mock), 'hello' as never)));
    expect(junk).toMatchObject({ code: 'MODEL_REQUEST_INVALID', path: '' });
    expect(mock.doStreamCalls).toHaveLength(0);
  });
});

describe('aiSdkModel().stream: abort and early exit', () => {
  it('rejects with AbortedError without calling the model when the signal has already fired', async () => {
    const mock = mockStreamModel(streamParts(['never']));
    const controller = new AbortController();
    controller.abort('gone');
    const error = await rejectionOf(collect(streamOf(aiSdkModel(mock), ask(controller.signal))));
    expect(AbortedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'ABORTED', cause: 'gone' });
    expect(mock.doStreamCalls).toHaveLength(0);
  });

  it('rejects the pending next() at once when aborted mid-stream, although the provider ignores the signal', async () => {
    const provider = manualStream();
    const mock = new MockLanguageModelV3({ doStream: async () => ({ stream: provider.stream }) });
    const controller = new AbortController();
    const iterator = streamOf(aiSdkModel(mock), ask(controller.signal))[Symbol.asyncIterator]();
    provider.push({ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' });
    provider.push({ type: 'text-delta', id: 't', delta: 'Hel' });
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text-delta', delta: 'Hel' } });
    const pending = iterator.next();
    const reason = new Error('user left');
    controller.abort(reason);
    const error = await rejectionOf(pending);
    expect(error).toMatchObject({ code: 'ABORTED', cause: reason });
    // The provider's stream is cancelled, and its request saw the abort.
    await provider.cancelled;
    expect(mock.doStreamCalls[0]!.abortSignal?.aborted).toBe(true);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('rejects the next next() when the signal fires between two reads', async () => {
    const provider = manualStream();
    const mock = new MockLanguageModelV3({ doStream: async () => ({ stream: provider.stream }) });
    const controller = new AbortController();
    const iterator = streamOf(aiSdkModel(mock), ask(controller.signal))[Symbol.asyncIterator]();
    provider.push(
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'one' },
      { type: 'text-delta', id: 't', delta: 'two' },
    );
    await iterator.next();
    controller.abort('stop');
    await expect(iterator.next()).rejects.toMatchObject({ code: 'ABORTED', cause: 'stop' });
    await provider.cancelled;
  });

  it('cancels the provider stream and request when the reader breaks early', async () => {
    const provider = manualStream();
    const mock = new MockLanguageModelV3({ doStream: async () => ({ stream: provider.stream }) });
    provider.push(
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'enough' },
    );
    const seen: ChatStreamPart[] = [];
    for await (const part of streamOf(aiSdkModel(mock), ask())) {
      seen.push(part);
      break;
    }
    expect(seen).toEqual([{ type: 'text-delta', delta: 'enough' }]);
    await provider.cancelled;
    expect(mock.doStreamCalls[0]!.abortSignal?.aborted).toBe(true);
  });

  it('keeps the reply of a stream that finished before the signal fired, and cancels nothing', async () => {
    const controller = new AbortController();
    const cancelled = deferred<boolean>();
    const parts = streamParts(['done']);
    const mock = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<StreamPart>({
          start(c) {
            for (const part of parts) c.enqueue(part);
            c.close();
          },
          cancel() {
            cancelled.resolve(true);
          },
        }),
      }),
    });
    const out = await collect(streamOf(aiSdkModel(mock), ask(controller.signal)));
    controller.abort();
    expect(out.at(-1)).toMatchObject({ type: 'finish', response: { content: 'done' } });
    cancelled.resolve(false);
    expect(await cancelled.promise).toBe(false);
  });

  it('streams through a model id string resolved by the global provider', async () => {
    const previous = globalThis.AI_SDK_DEFAULT_PROVIDER;
    const { MockProviderV3 } = await import('ai/test');
    globalThis.AI_SDK_DEFAULT_PROVIDER = new MockProviderV3({
      languageModels: { good: new MockLanguageModelV3({ doStream: { stream: readableOf(streamParts(['hi'])) } }) },
    });
    try {
      const parts = await collect(streamOf(aiSdkModel('good'), ask()));
      expect(parts.at(-1)).toMatchObject({ type: 'finish', response: { content: 'hi' } });
    } finally {
      globalThis.AI_SDK_DEFAULT_PROVIDER = previous;
    }
  });
});

import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { AbortedError, ModelStreamError, streamChat } from '@signalyard/core';
import type { ChatModel, ChatRequest, ChatResponse, ChatStreamPart, ToolCall } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { collect, deferred, rejectsCode, throwsCode } from '@signalyard/test-utils';

const req = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

const failGenerate = (): Promise<ChatResponse> => Promise.reject(new Error('generate must not be called'));

/** A model whose `stream` yields `parts` as they are (any values: tests break the rules on purpose). */
function streaming(parts: readonly unknown[]): ChatModel & { readonly closed: () => boolean } {
  let closed = false;
  return {
    generate: failGenerate,
    async *stream() {
      try {
        for (const part of parts) yield part as ChatStreamPart;
      } finally {
        closed = true;
      }
    },
    closed: () => closed,
  };
}

const call = (id: string, name = 'lookup', args: unknown = { word: id }): ToolCall => ({ id, name, arguments: args });
const delta = (text: string): ChatStreamPart => ({ type: 'text-delta', delta: text });
const finish = (response: ChatResponse): ChatStreamPart => ({ type: 'finish', response });

/** Reads `parts` until it fails; returns what was yielded before, and the error. */
async function readUntilError(
  parts: AsyncIterable<ChatStreamPart>,
): Promise<{ seen: ChatStreamPart[]; error: unknown }> {
  const seen: ChatStreamPart[] = [];
  try {
    for await (const part of parts) seen.push(part);
  } catch (error) {
    return { seen, error };
  }
  return expect.unreachable('expected the stream to fail');
}

describe('streamChat: a model that streams', () => {
  it('yields the model’s parts in order, finish last', async () => {
    const parts = [
      delta('Hel'),
      delta('lo'),
      { type: 'tool-call', call: call('c1') },
      finish({ content: 'Hello', toolCalls: [call('c1')] }),
    ];
    const model = streaming(parts);
    await expect(collect(streamChat(model, req()))).resolves.toEqual(parts);
    expect(model.closed()).toBe(true);
  });

  it('calls stream once with the request as given, and never generate', async () => {
    const request = req({ agentId: 'triage' });
    const stream = vi.fn(async function* (_request: ChatRequest): AsyncGenerator<ChatStreamPart> {
      yield finish({ content: '' });
    });
    const generate = vi.fn(failGenerate);
    await collect(streamChat({ generate, stream }, request));
    expect(stream).toHaveBeenCalledTimes(1);
    expect(stream.mock.calls[0]?.[0]).toBe(request);
    expect(generate).not.toHaveBeenCalled();
  });

  it('calls nothing before iteration starts', () => {
    const stream = vi.fn(async function* (): AsyncGenerator<ChatStreamPart> {
      yield finish({ content: '' });
    });
    streamChat({ generate: failGenerate, stream }, req());
    expect(stream).not.toHaveBeenCalled();
  });

  it('skips empty text deltas (the stream it yields has none)', async () => {
    const model = streaming([delta(''), delta('a'), delta(''), finish({ content: 'a' })]);
    await expect(collect(streamChat(model, req()))).resolves.toEqual([delta('a'), finish({ content: 'a' })]);
  });

  it('accepts a reply with no text and no calls: just finish', async () => {
    await expect(collect(streamChat(streaming([finish({ content: '' })]), req()))).resolves.toEqual([
      finish({ content: '' }),
    ]);
  });

  it('compares tool call arguments structurally: key order does not matter', async () => {
    const model = streaming([
      { type: 'tool-call', call: call('c1', 'pay', { a: 1, b: [1, { c: 2 }] }) },
      finish({ content: '', toolCalls: [call('c1', 'pay', { b: [1, { c: 2 }], a: 1 })] }),
    ]);
    await expect(collect(streamChat(model, req()))).resolves.toHaveLength(2);
  });

  it('passes a model’s own errors through unchanged, after the parts before them', async () => {
    const boom = new Error('provider down');
    const model: ChatModel = {
      generate: failGenerate,
      async *stream() {
        yield delta('par');
        throw boom;
      },
    };
    const { seen, error } = await readUntilError(streamChat(model, req()));
    expect(seen).toEqual([delta('par')]);
    expect(error).toBe(boom);
  });

  it('passes a synchronous throw of model.stream through at the first next()', async () => {
    const boom = new Error('cannot stream');
    const model: ChatModel = {
      generate: failGenerate,
      stream() {
        throw boom;
      },
    };
    const parts = streamChat(model, req());
    await expect(collect(parts)).rejects.toBe(boom);
  });

  it('closes the model’s stream when the reader stops early', async () => {
    const model = streaming([delta('a'), delta('b'), finish({ content: 'ab' })]);
    for await (const part of streamChat(model, req())) {
      expect(part).toEqual(delta('a'));
      break;
    }
    expect(model.closed()).toBe(true);
  });
});

describe('streamChat: a model without stream', () => {
  it('turns the generate reply into one text delta, a part per tool call, then finish', async () => {
    const response: ChatResponse = {
      content: 'Looking up.',
      toolCalls: [call('c1'), call('c2')],
      usage: { outputTokens: 3 },
    };
    const generate = vi.fn(async (_request: ChatRequest) => response);
    const request = req();
    await expect(collect(streamChat({ generate }, request))).resolves.toEqual([
      delta('Looking up.'),
      { type: 'tool-call', call: call('c1') },
      { type: 'tool-call', call: call('c2') },
      { type: 'finish', response },
    ]);
    expect(generate).toHaveBeenCalledTimes(1);
    expect(generate.mock.calls[0]?.[0]).toBe(request);
  });

  it('yields no text delta for empty content', async () => {
    const parts = await collect(
      streamChat({ generate: async () => ({ content: '', toolCalls: [call('c1')] }) }, req()),
    );
    expect(parts.map((p) => p.type)).toEqual(['tool-call', 'finish']);
  });

  it('passes a rejection of generate through unchanged', async () => {
    const boom = new Error('rate limited');
    await expect(collect(streamChat({ generate: () => Promise.reject(boom) }, req()))).rejects.toBe(boom);
  });

  it.each<[string, unknown]>([
    ['not an object', 'hello'],
    ['no content', { toolCalls: [] }],
    ['toolCalls not a list', { content: '', toolCalls: {} }],
    ['a malformed tool call', { content: '', toolCalls: [{ id: 'c1' }] }],
    ['usage not an object', { content: '', usage: 3 }],
  ])('rejects a generate reply that is %s with MODEL_STREAM_INVALID', async (_title, reply) => {
    const model = { generate: async () => reply as ChatResponse };
    const error = await rejectsCode(collect(streamChat(model, req({ agentId: 'billing' }))), 'MODEL_STREAM_INVALID');
    expect(ModelStreamError.isInstance(error)).toBe(true);
    expect(error.message).toContain('"billing"');
    expect(error.message).toContain('generate');
  });
});

describe('streamChat: the stream rules', () => {
  it.each<[string, readonly unknown[], string]>([
    ['a part that is not an object', ['hi', finish({ content: '' })], 'is not a stream part'],
    ['a part of an unknown type', [{ type: 'reasoning', text: 'x' }, finish({ content: '' })], 'is not a stream part'],
    ['a delta that is not a string', [{ type: 'text-delta', delta: 42 }, finish({ content: '' })], 'expected a string'],
    ['a tool call without a name', [{ type: 'tool-call', call: { id: 'c1', arguments: {} } }], 'name'],
    ['a tool call with an empty name', [{ type: 'tool-call', call: { id: 'c1', name: '', arguments: {} } }], 'name'],
    ['a tool call whose id is not a string', [{ type: 'tool-call', call: { id: 1, name: 'x' } }], 'id'],
    ['a tool-call part without a call', [{ type: 'tool-call' }], 'ToolCall'],
    ['a finish without a response', [{ type: 'finish' }], 'ChatResponse'],
    ['a finish whose content is not a string', [finish({ content: 1 } as unknown as ChatResponse)], 'content'],
    ['deltas that differ from the content', [delta('Hel'), finish({ content: 'Hello' })], '"Hel"'],
    ['content with no deltas', [finish({ content: 'Hello' })], 'concatenate'],
    [
      'a streamed call missing from finish',
      [{ type: 'tool-call', call: call('c1') }, finish({ content: '' })],
      '1 tool-call part streamed',
    ],
    [
      'a finish call that was not streamed',
      [finish({ content: '', toolCalls: [call('c1')] })],
      '0 tool-call parts streamed',
    ],
    [
      'calls in another order',
      [
        { type: 'tool-call', call: call('c1') },
        { type: 'tool-call', call: call('c2') },
        finish({ content: '', toolCalls: [call('c2'), call('c1')] }),
      ],
      'tool call 0 differs',
    ],
    [
      'a call with other arguments',
      [
        { type: 'tool-call', call: call('c1', 'lookup', { word: 'a' }) },
        finish({ content: '', toolCalls: [call('c1', 'lookup', { word: 'b' })] }),
      ],
      'differs',
    ],
    [
      'a call with another name',
      [{ type: 'tool-call', call: call('c1', 'a') }, finish({ content: '', toolCalls: [call('c1', 'b')] })],
      'differs',
    ],
    ['a part after finish', [finish({ content: '' }), delta('late')], 'after the finish part'],
    ['two finish parts', [finish({ content: '' }), finish({ content: '' })], 'after the finish part'],
    ['an end without finish', [delta('a')], 'without a finish part'],
    ['an empty stream', [], 'ended after 0 parts without a finish part'],
  ])('rejects %s with MODEL_STREAM_INVALID', async (_title, parts, words) => {
    const model = streaming(parts);
    const error = await rejectsCode(collect(streamChat(model, req())), 'MODEL_STREAM_INVALID');
    expect(ModelStreamError.isInstance(error)).toBe(true);
    expect(error.message).toContain(words);
    expect(model.closed()).toBe(true);
  });

  it('yields the valid parts before the broken one, and never the finish of a broken stream', async () => {
    const { seen, error } = await readUntilError(
      streamChat(streaming([delta('a'), delta('b'), finish({ content: 'ab' }), delta('c')]), req()),
    );
    expect(seen).toEqual([delta('a'), delta('b')]);
    expect(ModelStreamError.isInstance(error)).toBe(true);
  });

  it('names the agent of the request in the error and its agentId field', async () => {
    const error = await rejectsCode(
      collect(streamChat(streaming([]), req({ agentId: 'writer' }))),
      'MODEL_STREAM_INVALID',
    );
    expect(error.message).toContain('agent "writer"');
    if (!ModelStreamError.isInstance(error)) return expect.unreachable('expected a ModelStreamError');
    expect(error.agentId).toBe('writer');
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['a promise', Promise.resolve([])],
    ['a sync iterable', [finish({ content: '' })]],
    ['an iterable whose iterator has no next', { [Symbol.asyncIterator]: () => ({}) }],
  ])('rejects a stream() that returns %s with MODEL_STREAM_INVALID', async (_title, value) => {
    const model = { generate: failGenerate, stream: () => value as AsyncIterable<ChatStreamPart> };
    await rejectsCode(collect(streamChat(model, req())), 'MODEL_STREAM_INVALID');
  });

  it('rejects an iterator whose next() resolves something that is not a result', async () => {
    const model: ChatModel = {
      generate: failGenerate,
      stream: () => ({
        [Symbol.asyncIterator]: () => ({ next: async () => 'part' as unknown as IteratorResult<ChatStreamPart> }),
      }),
    };
    await rejectsCode(collect(streamChat(model, req())), 'MODEL_STREAM_INVALID');
  });

  it('property: any text split into any deltas, with any calls, passes unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'grapheme', minLength: 1 }), { maxLength: 8 }),
        fc.array(fc.record({ id: fc.string(), name: fc.string({ minLength: 1 }), arguments: fc.jsonValue() }), {
          maxLength: 3,
        }),
        async (deltas, calls) => {
          const response: ChatResponse = { content: deltas.join(''), toolCalls: calls };
          const parts: ChatStreamPart[] = [
            ...deltas.map(delta),
            ...calls.map((c): ChatStreamPart => ({ type: 'tool-call', call: c })),
            finish(response),
          ];
          expect(await collect(streamChat(streaming(parts), req()))).toEqual(parts);
        },
      ),
    );
  });
});

describe('streamChat: abort', () => {
  it('rejects at the first next() without calling the model when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort(new Error('user left'));
    const generate = vi.fn(failGenerate);
    const stream = vi.fn(failGenerate as unknown as () => AsyncIterable<ChatStreamPart>);
    for (const model of [{ generate }, { generate, stream }]) {
      const error = await rejectsCode(collect(streamChat(model, req({ abortSignal: controller.signal }))), 'ABORTED');
      expect(error.cause).toEqual(new Error('user left'));
    }
    expect(generate).not.toHaveBeenCalled();
    expect(stream).not.toHaveBeenCalled();
  });

  it('rejects the pending next() at once when the model ignores the signal, and closes its stream', async () => {
    const controller = new AbortController();
    const never = deferred<IteratorResult<ChatStreamPart>>();
    const returned = vi.fn(async (): Promise<IteratorResult<ChatStreamPart>> => ({ done: true, value: undefined }));
    let reads = 0;
    const model: ChatModel = {
      generate: failGenerate,
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: async () => (reads++ === 0 ? { done: false, value: delta('a') } : never.promise),
          return: returned,
        }),
      }),
    };
    const iterator = streamChat(model, req({ abortSignal: controller.signal }))[Symbol.asyncIterator]();
    await expect(iterator.next()).resolves.toEqual({ done: false, value: delta('a') });
    const pending = iterator.next();
    controller.abort();
    await rejectsCode(pending, 'ABORTED');
    expect(returned).toHaveBeenCalledTimes(1);
    await expect(iterator.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it('rejects at once when generate ignores the signal (a model without stream)', async () => {
    const controller = new AbortController();
    const model = { generate: () => new Promise<ChatResponse>(() => undefined) };
    const pending = collect(streamChat(model, req({ abortSignal: controller.signal })));
    controller.abort();
    await rejectsCode(pending, 'ABORTED');
  });

  it('rejects the next read when the signal fires between parts', async () => {
    for (const model of [
      streaming([delta('a'), delta('b'), finish({ content: 'ab' })]),
      { generate: async () => ({ content: 'ab', toolCalls: [call('c1')] }) },
    ]) {
      const controller = new AbortController();
      const seen: ChatStreamPart[] = [];
      const error = await rejectsCode(
        (async () => {
          for await (const part of streamChat(model, req({ abortSignal: controller.signal }))) {
            seen.push(part);
            controller.abort();
          }
        })(),
        'ABORTED',
      );
      expect(AbortedError.isInstance(error)).toBe(true);
      expect(seen).toHaveLength(1);
    }
  });

  it('listens to the signal once per stream, not once per part, and stops listening when the stream ends', async () => {
    const controller = new AbortController();
    const signal = controller.signal;
    const added = vi.spyOn(signal, 'addEventListener');
    const removed = vi.spyOn(signal, 'removeEventListener');
    const parts = [delta('a'), delta('b'), delta('c'), finish({ content: 'abc' })];
    await expect(collect(streamChat(streaming(parts), req({ abortSignal: signal })))).resolves.toEqual(parts);
    expect(added).toHaveBeenCalledTimes(1);
    expect(removed).toHaveBeenCalledTimes(1);
    expect(removed.mock.calls[0]?.[1]).toBe(added.mock.calls[0]?.[1]);
    // Also when the stream fails, or its reader stops early.
    for (const read of [
      () => collect(streamChat(streaming([delta('a')]), req({ abortSignal: signal }))).catch(() => undefined),
      async () => {
        for await (const _ of streamChat(streaming(parts), req({ abortSignal: signal }))) break;
      },
    ]) {
      added.mockClear();
      removed.mockClear();
      await read();
      expect(added).toHaveBeenCalledTimes(1);
      expect(removed).toHaveBeenCalledTimes(1);
    }
  });

  it('ignores a late rejection of a read it abandoned on abort (no unhandled rejection)', async () => {
    const controller = new AbortController();
    const late = deferred<IteratorResult<ChatStreamPart>>();
    const model: ChatModel = {
      generate: failGenerate,
      stream: () => ({ [Symbol.asyncIterator]: () => ({ next: () => late.promise }) }),
    };
    const pending = collect(streamChat(model, req({ abortSignal: controller.signal })));
    controller.abort();
    await rejectsCode(pending, 'ABORTED');
    late.reject(new Error('the model gave up too'));
    await new Promise((resolve) => setImmediate(resolve));
  });

  it('keeps an AbortedError given as the abort reason', async () => {
    const controller = new AbortController();
    const reason = new AbortedError({ message: 'turn stopped' });
    controller.abort(reason);
    await expect(collect(streamChat(streaming([]), req({ abortSignal: controller.signal })))).rejects.toBe(reason);
  });
});

describe('streamChat: bad arguments', () => {
  it.each<[string, unknown]>([
    ['null', null],
    ['a string', 'gpt'],
    ['an object without generate', {}],
    ['a generate that is not a function', { generate: 'yes' }],
    ['a stream that is not a function', { generate: failGenerate, stream: true }],
  ])('throws CHAT_MODEL_INVALID for a model that is %s', (_title, model) => {
    const error = throwsCode(() => streamChat(model as ChatModel, req()), 'CHAT_MODEL_INVALID');
    expect(error.message).toContain('Invalid model');
  });

  it.each<[string, unknown, string]>([
    ['undefined', undefined, 'expected a ChatRequest'],
    ['a string', 'hello', 'expected a ChatRequest'],
    ['without messages', {}, 'messages'],
    ['with messages that are not a list', { messages: 'hi' }, 'messages'],
    ['with tools that are not a list', { messages: [], tools: {} }, 'tools'],
    ['with an abortSignal that is not one', { messages: [], abortSignal: {} }, 'abortSignal'],
    ['with an agentId that is not a string', { messages: [], agentId: 7 }, 'agentId'],
  ])('throws CHAT_REQUEST_INVALID for a request %s', (_title, request, words) => {
    const model = { generate: vi.fn(failGenerate) };
    const error = throwsCode(() => streamChat(model, request as ChatRequest), 'CHAT_REQUEST_INVALID');
    expect(error.message).toContain(words);
    expect(model.generate).not.toHaveBeenCalled();
  });
});

describe('streamChat over scriptedModel', () => {
  // A CPU-bound property run: under coverage on a busy 2-core machine it can take more than
  // vitest's default 5 s (a time limit, not a timing assertion).
  it(
    'property: deltas concatenate to the content, calls equal the reply’s, for any chunk size',
    { timeout: 60_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.string({ unit: 'binary' }),
          fc.integer({ min: 1, max: 40 }),
          fc.array(fc.record({ id: fc.string(), name: fc.string({ minLength: 1 }), arguments: fc.jsonValue() }), {
            maxLength: 3,
          }),
          async (content, streamChunkChars, toolCalls) => {
            const model = scriptedModel([{ content, toolCalls }], { streamChunkChars });
            const parts = await collect(streamChat(model, req()));
            const deltas = parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : []));
            expect(deltas.join('')).toBe(content);
            expect(parts.flatMap((p) => (p.type === 'tool-call' ? [p.call] : []))).toEqual(toolCalls);
            expect(parts.at(-1)).toEqual({ type: 'finish', response: { content, toolCalls } });
          },
        ),
      );
    },
  );
});

describe('streamChat: calls in order', () => {
  it('next() calls made at once get the parts in turn; a return() behind them closes the model stream after them', async () => {
    const model = streaming([delta('a'), delta('b'), finish({ content: 'ab' })]);
    const parts = streamChat(model, req())[Symbol.asyncIterator]();
    const first = parts.next();
    const second = parts.next();
    const closed = (parts.return as NonNullable<typeof parts.return>)();
    const after = parts.next();
    expect(await first).toEqual({ value: delta('a'), done: false });
    expect(await second).toEqual({ value: delta('b'), done: false });
    expect(await closed).toEqual({ value: undefined, done: true });
    expect(await after).toEqual({ value: undefined, done: true });
    expect(model.closed()).toBe(true);
  });

  it('return() before the first next() never calls the model', async () => {
    const stream = vi.fn();
    const parts = streamChat({ generate: failGenerate, stream }, req())[Symbol.asyncIterator]();
    expect(await (parts.return as NonNullable<typeof parts.return>)()).toEqual({ value: undefined, done: true });
    expect(await parts.next()).toEqual({ value: undefined, done: true });
    expect(stream).not.toHaveBeenCalled();
  });
});

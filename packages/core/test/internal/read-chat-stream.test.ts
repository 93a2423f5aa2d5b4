import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { AbortedError, ModelStreamError, streamChat } from '@signalyard/core';
import type { ChatModel, ChatRequest, ChatResponse, ChatStreamPart, ToolCall } from '@signalyard/core';
import { AbortRace, readChatStream } from '@signalyard/core/internal';
import { scriptedModel } from '@signalyard/core/testing';
import { collect, deferred, rejectsCode } from '@signalyard/test-utils';

const req = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});
const failGenerate = (): Promise<ChatResponse> => Promise.reject(new Error('generate must not be called'));
const call = (id: string): ToolCall => ({ id, name: 'lookup', arguments: { word: id } });
const delta = (text: string): ChatStreamPart => ({ type: 'text-delta', delta: text });
const finish = (response: ChatResponse): ChatStreamPart => ({ type: 'finish', response });

/** A model whose `stream` yields `parts` as they are; `closed()` once its generator finished. */
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

/** Every part `readChatStream` hands over, and how the read ended. */
async function readAll(
  model: ChatModel,
  request: ChatRequest,
  race?: AbortRace,
): Promise<{ seen: ChatStreamPart[]; error?: unknown }> {
  const seen: ChatStreamPart[] = [];
  try {
    await readChatStream(model, request, (part) => seen.push(part), race);
  } catch (error) {
    return { seen, error };
  }
  return { seen };
}

describe('readChatStream', () => {
  it('hands over the model’s parts in order, finish last, skipping empty deltas, and closes nothing twice', async () => {
    const parts = [delta('Hel'), delta(''), delta('lo'), { type: 'tool-call', call: call('c1') }];
    const model = streaming([...parts, finish({ content: 'Hello', toolCalls: [call('c1')] })]);
    const { seen, error } = await readAll(model, req());
    expect(error).toBeUndefined();
    expect(seen).toEqual([delta('Hel'), delta('lo'), parts[3], finish({ content: 'Hello', toolCalls: [call('c1')] })]);
    expect(model.closed()).toBe(true);
  });

  it('turns a model without stream into the parts streamChat makes from generate', async () => {
    const model = { generate: async () => ({ content: 'Hi', toolCalls: [call('c1'), call('c2')] }) };
    const { seen } = await readAll(model, req());
    expect(seen).toEqual(await collect(streamChat(model, req())));
    expect((await readAll({ generate: async () => ({ content: '' }) }, req())).seen).toEqual([finish({ content: '' })]);
  });

  it('hands over the same parts as streamChat for any scripted reply and chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), fc.integer({ min: 1, max: 9 }), async (content, chunk) => {
        const { seen } = await readAll(scriptedModel([content], { streamChunkChars: chunk }), req());
        expect(seen).toEqual(await collect(streamChat(scriptedModel([content], { streamChunkChars: chunk }), req())));
      }),
      { numRuns: 50 },
    );
  });

  it.each<[string, readonly unknown[], string]>([
    ['a part of an unknown type', [{ type: 'reasoning' }, finish({ content: '' })], 'is not a stream part'],
    ['deltas that differ from the content', [delta('Hel'), finish({ content: 'Hello' })], '"Hel"'],
    ['a part after finish', [finish({ content: '' }), delta('late')], 'after the finish part'],
    ['an end without finish', [delta('a')], 'without a finish part'],
  ])('rejects %s with MODEL_STREAM_INVALID after the valid parts, closing the stream', async (_t, parts, words) => {
    const model = streaming(parts);
    const { seen, error } = await readAll(model, req({ agentId: 'triage' }));
    expect(ModelStreamError.isInstance(error)).toBe(true);
    expect((error as ModelStreamError).message).toContain(words);
    expect((error as ModelStreamError).agentId).toBe('triage');
    expect(seen.some((p) => p.type === 'finish')).toBe(false);
    expect(model.closed()).toBe(true);
  });

  it('passes the model’s own error through unchanged, after the parts before it', async () => {
    const boom = new Error('rate limited');
    const model: ChatModel = {
      generate: failGenerate,
      async *stream() {
        yield delta('a');
        throw boom;
      },
    };
    expect(await readAll(model, req())).toEqual({ seen: [delta('a')], error: boom });
    const rejecting = { generate: () => Promise.reject(boom) };
    expect(await readAll(rejecting, req())).toEqual({ seen: [], error: boom });
  });

  it('rejects with what onPart throws and closes the model’s stream', async () => {
    const model = streaming([delta('a'), delta('b'), finish({ content: 'ab' })]);
    const oops = new Error('reader failed');
    await expect(
      readChatStream(model, req(), () => {
        throw oops;
      }),
    ).rejects.toBe(oops);
    expect(model.closed()).toBe(true);
  });

  it('rejects the pending read at once when the model ignores the signal, and closes its stream', async () => {
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
    const seen: ChatStreamPart[] = [];
    const read = readChatStream(model, req({ abortSignal: controller.signal }), (part) => {
      seen.push(part);
      queueMicrotask(() => controller.abort());
    });
    await rejectsCode(read, 'ABORTED');
    expect(seen).toEqual([delta('a')]);
    expect(returned).toHaveBeenCalledTimes(1);
    never.reject(new Error('late')); // abandoned: never unhandled
    await new Promise((resolve) => setImmediate(resolve));
  });

  it('fails the next read when onPart aborts the signal (streaming and generated alike)', async () => {
    for (const model of [
      streaming([delta('a'), delta('b'), finish({ content: 'ab' })]),
      { generate: async () => ({ content: 'ab', toolCalls: [call('c1')] }) },
    ]) {
      const controller = new AbortController();
      const seen: ChatStreamPart[] = [];
      const error = await rejectsCode(
        readChatStream(model, req({ abortSignal: controller.signal }), (part) => {
          seen.push(part);
          controller.abort();
        }),
        'ABORTED',
      );
      expect(AbortedError.isInstance(error)).toBe(true);
      expect(seen).toHaveLength(1);
    }
  });

  it('rejects without calling the model when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort(new Error('user left'));
    const stream = vi.fn();
    const error = await rejectsCode(
      readChatStream({ generate: failGenerate, stream }, req({ abortSignal: controller.signal }), () => undefined),
      'ABORTED',
    );
    expect(error.cause).toEqual(new Error('user left'));
    expect(stream).not.toHaveBeenCalled();
  });

  it('with the run’s AbortRace adds no listener of its own, and still rejects at once on abort', async () => {
    const controller = new AbortController();
    const signal = controller.signal;
    const race = new AbortRace(signal);
    const added = vi.spyOn(signal, 'addEventListener');
    const parts = [delta('a'), finish({ content: 'a' })];
    expect(await readAll(streaming(parts), req({ abortSignal: signal }), race)).toEqual({ seen: parts });
    expect(added).not.toHaveBeenCalled();
    const model: ChatModel = {
      generate: failGenerate,
      stream: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise<never>(() => undefined) }) }),
    };
    const pending = readChatStream(model, req({ abortSignal: signal }), () => undefined, race);
    controller.abort();
    await rejectsCode(pending, 'ABORTED');
    expect(added).not.toHaveBeenCalled();
    race.dispose();
  });

  it('without a race listens once per read and stops listening when it ends', async () => {
    const signal = new AbortController().signal;
    const added = vi.spyOn(signal, 'addEventListener');
    const removed = vi.spyOn(signal, 'removeEventListener');
    await readAll(streaming([delta('a'), delta('b'), finish({ content: 'ab' })]), req({ abortSignal: signal }));
    expect(added).toHaveBeenCalledTimes(1);
    expect(removed).toHaveBeenCalledTimes(1);
  });

  it.each<[string, unknown, unknown, string]>([
    ['a model that is not one', { stream: 1 }, req(), 'CHAT_MODEL_INVALID'],
    ['a request without messages', { generate: failGenerate }, {}, 'CHAT_REQUEST_INVALID'],
  ])('rejects %s as streamChat throws', async (_t, model, request, code) => {
    const error = await rejectsCode(
      readChatStream(model as ChatModel, request as ChatRequest, () => undefined),
      code,
    );
    expect(error.message).toContain('Invalid');
  });
});

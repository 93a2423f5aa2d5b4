import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import fc from 'fast-check';
import { AbortedError } from '@signalyard/core';
import type { ChatRequest, ChatResponse, ChatStreamPart } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import type { ScriptedModel } from '@signalyard/core/testing';
import { collect, deferred, rejectsCode, throwsCode } from '@signalyard/test-utils';

const req = (agentId?: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [{ role: 'user', content: 'hi' }],
  ...(agentId === undefined ? {} : { agentId }),
  ...extra,
});

const deltasOf = (parts: readonly ChatStreamPart[]): string[] =>
  parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : []));

afterEach(() => {
  vi.useRealTimers();
});

describe('scriptedModel().stream: parts', () => {
  it('splits the content into deltas of 16 code units by default, then finish', async () => {
    const content = 'a'.repeat(40);
    const parts = await collect(scriptedModel([content]).stream(req()));
    expect(deltasOf(parts)).toEqual(['a'.repeat(16), 'a'.repeat(16), 'a'.repeat(8)]);
    expect(parts.at(-1)).toEqual({ type: 'finish', response: { content } });
    expect(parts).toHaveLength(4);
  });

  it('uses streamChunkChars as the longest delta', async () => {
    const parts = await collect(scriptedModel(['Hello there'], { streamChunkChars: 4 }).stream(req()));
    expect(deltasOf(parts)).toEqual(['Hell', 'o th', 'ere']);
  });

  it('never splits a surrogate pair: a delta then holds one more code unit', async () => {
    const model = scriptedModel(['a😀b', 'a😀b', '😀😀'], { streamChunkChars: 1 });
    expect(deltasOf(await collect(model.stream(req())))).toEqual(['a', '😀', 'b']);
    const two = scriptedModel(['a😀b'], { streamChunkChars: 2 });
    expect(deltasOf(await collect(two.stream(req())))).toEqual(['a😀', 'b']);
    expect(deltasOf(await collect(model.stream(req())))).toEqual(['a', '😀', 'b']);
    expect(deltasOf(await collect(model.stream(req())))).toEqual(['😀', '😀']);
  });

  it('splits a lone surrogate like any code unit', async () => {
    const model = scriptedModel(['\uD83Dx\uDE00'], { streamChunkChars: 1 });
    expect(deltasOf(await collect(model.stream(req())))).toEqual(['\uD83D', 'x', '\uDE00']);
  });

  it('property: deltas concatenate to the content, none longer than allowed, no pair split', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.integer({ min: 1, max: 20 }),
        async (content, size) => {
          const deltas = deltasOf(await collect(scriptedModel([content], { streamChunkChars: size }).stream(req())));
          expect(deltas.join('')).toBe(content);
          for (const [i, d] of deltas.entries()) {
            expect(d.length).toBeGreaterThan(0);
            const high = d.charCodeAt(d.length - 1);
            const next = deltas[i + 1]?.charCodeAt(0);
            const splitsPair =
              high >= 0xd800 && high <= 0xdbff && next !== undefined && next >= 0xdc00 && next <= 0xdfff;
            expect(splitsPair).toBe(false);
            expect(d.length).toBeLessThanOrEqual(size + 1);
            if (d.length === size + 1) expect(d.codePointAt(d.length - 2)).toBeGreaterThan(0xffff);
          }
        },
      ),
    );
  });

  it('yields no delta for empty content, a tool-call part per call, then finish with the whole response', async () => {
    const response: ChatResponse = {
      content: '',
      toolCalls: [
        { id: 'c1', name: 'lookup', arguments: { word: 'x' } },
        { id: 'c2', name: 'lookup', arguments: { word: 'y' } },
      ],
      usage: { inputTokens: 3 },
    };
    await expect(collect(scriptedModel([response]).stream(req()))).resolves.toEqual([
      { type: 'tool-call', call: response.toolCalls?.[0] },
      { type: 'tool-call', call: response.toolCalls?.[1] },
      { type: 'finish', response },
    ]);
  });

  it('streams text before tool calls', async () => {
    const response: ChatResponse = {
      content: 'Let me look.',
      toolCalls: [{ id: 'c1', name: 'lookup', arguments: {} }],
    };
    const parts = await collect(scriptedModel([response], { streamChunkChars: 100 }).stream(req()));
    expect(parts.map((p) => p.type)).toEqual(['text-delta', 'tool-call', 'finish']);
  });

  it('plays function steps, sync or async, and record scripts per agent', async () => {
    const model = scriptedModel({
      a: [(r) => `to ${r.agentId ?? '-'}`],
      b: [async () => ({ content: 'async' })],
    });
    expect(deltasOf(await collect(model.stream(req('a'))))).toEqual(['to a']);
    expect(deltasOf(await collect(model.stream(req('b'))))).toEqual(['async']);
  });

  it('uses the same script as generate: calls of either kind consume it in order', async () => {
    const model = scriptedModel(['one', 'two', 'three']);
    await expect(model.generate(req())).resolves.toEqual({ content: 'one' });
    expect(deltasOf(await collect(model.stream(req())))).toEqual(['two']);
    await expect(model.generate(req())).resolves.toEqual({ content: 'three' });
  });
});

describe('scriptedModel().stream: calls and steps', () => {
  it('records the request and uses its step when stream is called, not when it is read', async () => {
    const model = scriptedModel(['first', 'second']);
    const a = model.stream(req('a'));
    const b = model.stream(req('b'));
    expect(model.calls.map((c) => c.agentId)).toEqual(['a', 'b']);
    expect(deltasOf(await collect(b))).toEqual(['second']);
    expect(deltasOf(await collect(a))).toEqual(['first']);
  });

  it('keeps a copy of the request’s messages taken at call time', () => {
    const model = scriptedModel(['x']);
    const messages: ChatRequest['messages'][number][] = [{ role: 'user', content: 'hi' }];
    model.stream({ messages });
    messages.push({ role: 'user', content: 'later' });
    expect(model.calls[0]?.messages).toHaveLength(1);
  });

  it('rejects the first next() with SCRIPT_EXHAUSTED naming the agent (stream() itself does not throw)', async () => {
    const model = scriptedModel({ a: ['only'] });
    await collect(model.stream(req('a')));
    const parts = model.stream(req('a'));
    const error = await rejectsCode(collect(parts), 'SCRIPT_EXHAUSTED');
    expect(error.message).toContain('"a"');
    expect(model.calls).toHaveLength(2);
  });

  it('rejects with SCRIPT_STEP_INVALID when a function step returns something else', async () => {
    const model = scriptedModel([() => 42 as unknown as string]);
    await rejectsCode(collect(model.stream(req())), 'SCRIPT_STEP_INVALID');
  });

  it('passes a function step’s error through', async () => {
    const boom = new Error('provider down');
    const model = scriptedModel([
      () => {
        throw boom;
      },
    ]);
    await expect(collect(model.stream(req()))).rejects.toBe(boom);
  });

  it('rejects SCRIPT_INVALID for a streamChunkChars that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity, '4'])
      throwsCode(() => scriptedModel(['x'], { streamChunkChars: bad as number }), 'SCRIPT_INVALID');
    expect(() => scriptedModel(['x'], { streamChunkChars: 1 })).not.toThrow();
  });
});

describe('scriptedModel().stream: delayMs and abortSignal', () => {
  it('waits delayMs before the first part only', async () => {
    vi.useFakeTimers();
    const model = scriptedModel(['abcdef'], { delayMs: 1000, streamChunkChars: 2 });
    const iterator = model.stream(req())[Symbol.asyncIterator]();
    let first = false;
    const pending = iterator.next().then((r) => {
      first = true;
      return r;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(first).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(pending).resolves.toEqual({ done: false, value: { type: 'text-delta', delta: 'ab' } });
    expect(vi.getTimerCount()).toBe(0);
    await expect(iterator.next()).resolves.toEqual({ done: false, value: { type: 'text-delta', delta: 'cd' } });
  });

  it('rejects with AbortedError without using a step when the signal has already fired', async () => {
    const model = scriptedModel(['a']);
    const controller = new AbortController();
    const reason = new Error('user cancelled');
    controller.abort(reason);
    const error = await rejectsCode(
      collect(model.stream(req(undefined, { abortSignal: controller.signal }))),
      'ABORTED',
    );
    expect(error.cause).toBe(reason);
    await expect(model.generate(req())).resolves.toEqual({ content: 'a' });
  });

  it('an abort during delayMs rejects and clears the timer', async () => {
    vi.useFakeTimers();
    const model = scriptedModel(['slow'], { delayMs: 60_000 });
    const controller = new AbortController();
    const pending = collect(model.stream(req(undefined, { abortSignal: controller.signal })));
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    const error = await rejectsCode(pending, 'ABORTED');
    expect(AbortedError.isInstance(error)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('an abort while a function step is pending rejects at once', async () => {
    const never = deferred<string>();
    const model = scriptedModel([() => never.promise]);
    const controller = new AbortController();
    const pending = collect(model.stream(req(undefined, { abortSignal: controller.signal })));
    controller.abort();
    await rejectsCode(pending, 'ABORTED');
  });

  it('an abort between parts rejects the next read', async () => {
    const model = scriptedModel(['abcd'], { streamChunkChars: 1 });
    const controller = new AbortController();
    const seen: string[] = [];
    await rejectsCode(
      (async () => {
        for await (const part of model.stream(req(undefined, { abortSignal: controller.signal }))) {
          if (part.type === 'text-delta') seen.push(part.delta);
          controller.abort();
        }
      })(),
      'ABORTED',
    );
    expect(seen).toEqual(['a']);
  });
});

describe('scriptedModel().stream: types', () => {
  it('always has stream', () => {
    expectTypeOf<ScriptedModel['stream']>().toEqualTypeOf<(request: ChatRequest) => AsyncIterable<ChatStreamPart>>();
  });
});

import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { AbortedError, isSignalyardError } from '@signalyard/core';
import type { ChatModel, ChatRequest, ChatResponse, SignalyardError } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import type { ScriptStep, ScriptedModel } from '@signalyard/core/testing';
import { deferred } from '@signalyard/test-utils';

const req = (agentId?: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [{ role: 'user', content: 'hi' }],
  ...(agentId === undefined ? {} : { agentId }),
  ...extra,
});

async function rejectionOf(promise: Promise<unknown>): Promise<SignalyardError> {
  try {
    await promise;
  } catch (error) {
    if (isSignalyardError(error)) return error;
    throw new Error(`expected a SignalyardError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a rejection');
}

afterEach(() => {
  vi.useRealTimers();
});

describe('scriptedModel: a list', () => {
  it('is consumed in order, whichever agent calls', async () => {
    const model = scriptedModel(['one', 'two [DONE]']);
    await expect(model.generate(req('teacher'))).resolves.toEqual({ content: 'one' });
    await expect(model.generate(req('student'))).resolves.toEqual({ content: 'two [DONE]' });
  });

  it('plays ChatResponse steps as they are, tool calls and usage included', async () => {
    const withTools: ChatResponse = {
      content: '',
      toolCalls: [{ id: 'c1', name: 'lookup', arguments: { word: 'x' } }],
      usage: { inputTokens: 3 },
    };
    const model = scriptedModel([withTools, 'done']);
    await expect(model.generate(req())).resolves.toEqual(withTools);
    await expect(model.generate(req())).resolves.toEqual({ content: 'done' });
  });

  it('runs function steps with the request, sync or async', async () => {
    const model = scriptedModel([
      (r) => `you said ${r.messages.at(-1)?.content ?? ''}`,
      async (r) => ({ content: `agent ${r.agentId ?? '-'}`, toolCalls: [] }),
    ]);
    await expect(model.generate(req('a'))).resolves.toEqual({ content: 'you said hi' });
    await expect(model.generate(req('b'))).resolves.toEqual({ content: 'agent b', toolCalls: [] });
  });

  it('rejects with SCRIPT_EXHAUSTED naming the agent when it runs out', async () => {
    const model = scriptedModel(['only']);
    await model.generate(req('teacher'));
    const error = await rejectionOf(model.generate(req('student')));
    expect(error.code).toBe('SCRIPT_EXHAUSTED');
    expect(error.message).toContain('"student"');
    expect(error.message).toContain('call 2');
    // and keeps rejecting
    expect((await rejectionOf(model.generate(req()))).code).toBe('SCRIPT_EXHAUSTED');
  });

  it('an empty list is exhausted at once', async () => {
    expect((await rejectionOf(scriptedModel([]).generate(req('a')))).code).toBe('SCRIPT_EXHAUSTED');
  });

  it('copies the script: later changes to the array do not change it', async () => {
    const steps: ScriptStep[] = ['a'];
    const model = scriptedModel(steps);
    steps.push('b');
    await model.generate(req());
    expect((await rejectionOf(model.generate(req()))).code).toBe('SCRIPT_EXHAUSTED');
  });
});

describe('scriptedModel: a record per agent', () => {
  it('is consumed per request.agentId', async () => {
    const model = scriptedModel({ teacher: ['t1', 't2'], student: ['s1'] });
    await expect(model.generate(req('teacher'))).resolves.toEqual({ content: 't1' });
    await expect(model.generate(req('student'))).resolves.toEqual({ content: 's1' });
    await expect(model.generate(req('teacher'))).resolves.toEqual({ content: 't2' });
  });

  it('rejects with SCRIPT_EXHAUSTED naming the agent that ran out', async () => {
    const model = scriptedModel({ teacher: ['t1'], student: ['s1'] });
    await model.generate(req('teacher'));
    const error = await rejectionOf(model.generate(req('teacher')));
    expect(error.code).toBe('SCRIPT_EXHAUSTED');
    expect(error.message).toContain('"teacher"');
    await expect(model.generate(req('student'))).resolves.toEqual({ content: 's1' });
  });

  it('rejects with SCRIPT_EXHAUSTED for an agent it has no script for, or a request without agentId', async () => {
    const model = scriptedModel({ teacher: ['t1'] });
    const unknown = await rejectionOf(model.generate(req('reporter')));
    expect(unknown.code).toBe('SCRIPT_EXHAUSTED');
    expect(unknown.message).toContain('"reporter"');
    expect(unknown.message).toContain('"teacher"');
    const anonymous = await rejectionOf(model.generate(req()));
    expect(anonymous.code).toBe('SCRIPT_EXHAUSTED');
    expect(anonymous.message).toContain('(no agentId)');
  });

  it('treats agent ids as plain keys (no prototype lookups)', async () => {
    const model = scriptedModel({ constructor: ['c'] });
    await expect(model.generate(req('constructor'))).resolves.toEqual({ content: 'c' });
    expect((await rejectionOf(model.generate(req('toString')))).code).toBe('SCRIPT_EXHAUSTED');
  });
});

describe('scriptedModel: a function', () => {
  it('answers every request', async () => {
    let n = 0;
    const model = scriptedModel((r) => `${r.agentId ?? '?'} #${++n}`);
    for (let i = 1; i <= 5; i++) await expect(model.generate(req('a'))).resolves.toEqual({ content: `a #${i}` });
  });

  it('a function that throws rejects with that error, like a failing provider', async () => {
    const boom = new Error('rate limited');
    const model = scriptedModel(() => {
      throw boom;
    });
    await expect(model.generate(req())).rejects.toBe(boom);
    const asyncBoom = scriptedModel(async () => Promise.reject(boom));
    await expect(asyncBoom.generate(req())).rejects.toBe(boom);
  });

  it('a function returning something else rejects with SCRIPT_STEP_INVALID', async () => {
    const model = scriptedModel(() => 42 as unknown as string);
    expect((await rejectionOf(model.generate(req('a')))).code).toBe('SCRIPT_STEP_INVALID');
  });
});

describe('scriptedModel: calls', () => {
  it('records every request in call order, including failed ones', async () => {
    const model = scriptedModel({ a: ['x'] });
    await model.generate(req('a'));
    await model.generate(req('b')).catch(() => undefined);
    const controller = new AbortController();
    controller.abort();
    await model.generate(req('a', { abortSignal: controller.signal })).catch(() => undefined);
    expect(model.calls.map((c) => c.agentId)).toEqual(['a', 'b', 'a']);
  });

  it('keeps a copy of each request taken at call time', async () => {
    const model = scriptedModel(['a', 'b']);
    const history: ChatRequest['messages'][number][] = [{ role: 'user', content: 'q' }];
    const request: ChatRequest = { messages: history, agentId: 'x', tools: [{ name: 't', parameters: {} }] };
    await model.generate(request);
    history.push({ role: 'assistant', content: 'a', name: 'x' });
    await model.generate({ messages: history });
    expect(model.calls[0]!.messages).toEqual([{ role: 'user', content: 'q' }]);
    expect(model.calls[0]!.tools).toEqual([{ name: 't', parameters: {} }]);
    expect(model.calls[1]!.messages).toHaveLength(2);
  });
});

describe('scriptedModel: abortSignal and delayMs', () => {
  it('rejects at once with AbortedError when the signal is already aborted, without using a step', async () => {
    const model = scriptedModel(['a']);
    const controller = new AbortController();
    const reason = new Error('user cancelled');
    controller.abort(reason);
    const error = await rejectionOf(model.generate(req('a', { abortSignal: controller.signal })));
    expect(AbortedError.isInstance(error)).toBe(true);
    expect(error.code).toBe('ABORTED');
    expect(error.cause).toBe(reason);
    await expect(model.generate(req())).resolves.toEqual({ content: 'a' });
  });

  it('waits delayMs with a timer before replying', async () => {
    vi.useFakeTimers();
    const model = scriptedModel(['slow'], { delayMs: 1000 });
    let settled = false;
    const reply = model.generate(req()).then((r) => {
      settled = true;
      return r;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(reply).resolves.toEqual({ content: 'slow' });
  });

  it('an abort during delayMs rejects with AbortedError and clears the timer', async () => {
    vi.useFakeTimers();
    const model = scriptedModel(['slow'], { delayMs: 60_000 });
    const controller = new AbortController();
    const reply = model.generate(req('a', { abortSignal: controller.signal }));
    await vi.advanceTimersByTimeAsync(10);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort();
    const error = await rejectionOf(reply);
    expect(AbortedError.isInstance(error)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('an abort while a step function is pending rejects with AbortedError at once', async () => {
    const gate = deferred<string>();
    const model = scriptedModel(() => gate.promise);
    const controller = new AbortController();
    const reply = model.generate(req('a', { abortSignal: controller.signal }));
    controller.abort();
    expect(AbortedError.isInstance(await rejectionOf(reply))).toBe(true);
    gate.resolve('too late'); // settling afterwards changes nothing
  });

  it('a step function that aborts the signal itself still rejects with AbortedError', async () => {
    const controller = new AbortController();
    const model = scriptedModel(() => {
      controller.abort();
      return 'ignored';
    });
    expect((await rejectionOf(model.generate(req('a', { abortSignal: controller.signal })))).code).toBe('ABORTED');
  });

  it('a signal that never fires changes nothing, and its listeners are removed', async () => {
    const controller = new AbortController();
    const add = vi.spyOn(controller.signal, 'addEventListener');
    const remove = vi.spyOn(controller.signal, 'removeEventListener');
    const model = scriptedModel(async () => 'ok');
    await expect(model.generate(req('a', { abortSignal: controller.signal }))).resolves.toEqual({ content: 'ok' });
    expect(add).toHaveBeenCalledTimes(1);
    expect(remove).toHaveBeenCalledTimes(1);
  });

  it('delayMs applies to record and function scripts too', async () => {
    vi.useFakeTimers();
    const model = scriptedModel({ a: ['x'] }, { delayMs: 5 });
    const reply = model.generate(req('a'));
    await vi.advanceTimersByTimeAsync(5);
    await expect(reply).resolves.toEqual({ content: 'x' });
  });
});

describe('scriptedModel: bad scripts', () => {
  const code = (fn: () => unknown): string | undefined => {
    try {
      fn();
    } catch (error) {
      return isSignalyardError(error) ? error.code : String(error);
    }
    return undefined;
  };

  it('rejects malformed scripts and options with SCRIPT_INVALID at once', () => {
    expect(code(() => scriptedModel([42 as unknown as string]))).toBe('SCRIPT_INVALID');
    expect(code(() => scriptedModel([{ text: 'x' } as unknown as string]))).toBe('SCRIPT_INVALID');
    expect(code(() => scriptedModel([{ content: 'x', toolCalls: 'no' } as unknown as ChatResponse]))).toBe(
      'SCRIPT_INVALID',
    );
    expect(code(() => scriptedModel({ a: 'x' } as unknown as Record<string, string[]>))).toBe('SCRIPT_INVALID');
    expect(code(() => scriptedModel({ a: [null as unknown as string] }))).toBe('SCRIPT_INVALID');
    expect(code(() => scriptedModel(null as unknown as string[]))).toBe('SCRIPT_INVALID');
    expect(code(() => scriptedModel('x' as unknown as string[]))).toBe('SCRIPT_INVALID');
    expect(code(() => scriptedModel(['x'], { delayMs: -1 }))).toBe('SCRIPT_INVALID');
    expect(code(() => scriptedModel(['x'], { delayMs: Number.NaN }))).toBe('SCRIPT_INVALID');
    expect(code(() => scriptedModel(['x'], { delayMs: '5' as unknown as number }))).toBe('SCRIPT_INVALID');
    expect(code(() => scriptedModel(['x'], { delayMs: 0 }))).toBeUndefined();
  });
});

describe('scriptedModel: types', () => {
  it('is a ChatModel with readonly calls', () => {
    const model = scriptedModel(['x']);
    expectTypeOf(model).toExtend<ChatModel & { readonly calls: readonly ChatRequest[] }>();
    expectTypeOf<ScriptedModel['calls']>().toEqualTypeOf<readonly ChatRequest[]>();
    expectTypeOf<ScriptStep>().toEqualTypeOf<
      string | ChatResponse | ((request: ChatRequest) => string | ChatResponse | Promise<string | ChatResponse>)
    >();
  });
});

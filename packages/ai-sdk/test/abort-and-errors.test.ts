import { afterEach, describe, expect, it, vi } from 'vitest';
import { AbortedError, SignalyardError, type ChatRequest } from '@signalyard/core';
import { APICallError } from 'ai';
import { MockLanguageModelV3, MockProviderV3 } from 'ai/test';
import { ModelCallError, ModelRequestError, aiSdkModel } from '@signalyard/ai-sdk';
import { deferred, mockModel, rejectionOf, reply, type GenerateResult } from './support.js';

const ask = (abortSignal?: AbortSignal): ChatRequest =>
  abortSignal === undefined
    ? { messages: [{ role: 'user', content: 'Hi' }] }
    : { messages: [{ role: 'user', content: 'Hi' }], abortSignal };

const apiError = (statusCode: number, isRetryable: boolean): APICallError =>
  new APICallError({
    message: `HTTP ${statusCode}`,
    url: 'https://api.example.test/v1/chat',
    requestBodyValues: {},
    statusCode,
    isRetryable,
  });

afterEach(() => {
  vi.useRealTimers();
});

describe('abort', () => {
  it('rejects with AbortedError without calling the model when the signal has already fired', async () => {
    const mock = mockModel(reply('never'));
    const controller = new AbortController();
    const reason = new Error('user left');
    controller.abort(reason);
    const error = await rejectionOf(aiSdkModel(mock).generate(ask(controller.signal)));
    expect(AbortedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'ABORTED', cause: reason });
    expect(mock.doGenerateCalls).toHaveLength(0);
  });

  it('passes the abort signal to the provider, which sees it fire when the call is aborted', async () => {
    const started = deferred<AbortSignal | undefined>();
    const mock = new MockLanguageModelV3({
      doGenerate: ({ abortSignal }) => {
        started.resolve(abortSignal);
        return new Promise<GenerateResult>((_resolve, reject) => {
          abortSignal?.addEventListener('abort', () => {
            reject(new Error('request aborted', { cause: abortSignal.reason }));
          });
        });
      },
    });
    const controller = new AbortController();
    const pending = aiSdkModel(mock).generate(ask(controller.signal));
    const seen = await started.promise;
    expect(seen?.aborted).toBe(false);
    controller.abort();
    const error = await rejectionOf(pending);
    expect(seen?.aborted).toBe(true);
    expect(AbortedError.isInstance(error)).toBe(true);
    expect((error as AbortedError).cause).toBe(controller.signal.reason);
  });

  it('rejects with AbortedError as soon as the signal fires, even when the provider ignores it', async () => {
    const started = deferred<undefined>();
    const never = deferred<GenerateResult>();
    const mock = new MockLanguageModelV3({
      doGenerate: () => {
        started.resolve(undefined);
        return never.promise;
      },
    });
    const controller = new AbortController();
    const pending = aiSdkModel(mock).generate(ask(controller.signal));
    await started.promise;
    controller.abort('stop');
    const error = await rejectionOf(pending);
    expect(error).toMatchObject({ code: 'ABORTED', cause: 'stop' });
    // The abandoned call failing later raises no unhandled rejection.
    never.reject(new Error('late failure'));
    await Promise.resolve();
  });

  it('resolves normally when the signal never fires', async () => {
    const controller = new AbortController();
    await expect(aiSdkModel(mockModel(reply('fine'))).generate(ask(controller.signal))).resolves.toMatchObject({
      content: 'fine',
    });
  });

  it('keeps the reply of a call that finished before the signal fired', async () => {
    const controller = new AbortController();
    const response = await aiSdkModel(mockModel(reply('done'))).generate(ask(controller.signal));
    controller.abort();
    expect(response.content).toBe('done');
  });
});

describe('provider errors', () => {
  it('rejects with ModelCallError (MODEL_CALL_FAILED) carrying the provider error as cause', async () => {
    const failure = apiError(401, false);
    const mock = new MockLanguageModelV3({
      provider: 'openai.chat',
      modelId: 'gpt-4o-mini',
      doGenerate: () => Promise.reject(failure),
    });
    const error = await rejectionOf(aiSdkModel(mock).generate(ask()));
    expect(ModelCallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'MODEL_CALL_FAILED',
      cause: failure,
      statusCode: 401,
      model: '"gpt-4o-mini" (openai.chat)',
    });
    expect((error as Error).message).toBe('Model call to "gpt-4o-mini" (openai.chat) failed: HTTP 401');
  });

  it('wraps a plain thrown error too, without a status code', async () => {
    const failure = new Error('socket hang up');
    const mock = new MockLanguageModelV3({
      doGenerate: () => {
        throw failure;
      },
    });
    const error = await rejectionOf(aiSdkModel(mock).generate(ask()));
    expect(error).toMatchObject({ code: 'MODEL_CALL_FAILED', cause: failure });
    expect(error).not.toHaveProperty('statusCode');
  });

  it('wraps a provider error that is not an Error', async () => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- providers can reject with anything; this one rejects with a string
    const mock = new MockLanguageModelV3({ doGenerate: () => Promise.reject('overloaded') });
    const error = await rejectionOf(aiSdkModel(mock, { maxRetries: 0 }).generate(ask()));
    expect(error).toMatchObject({ code: 'MODEL_CALL_FAILED', cause: 'overloaded' });
    expect((error as Error).message).toContain('failed: "overloaded"');
  });

  it('reports the last status after the AI SDK’s retries of a retryable error', async () => {
    vi.useFakeTimers();
    const mock = new MockLanguageModelV3({ doGenerate: () => Promise.reject(apiError(503, true)) });
    const pending = rejectionOf(aiSdkModel(mock, { maxRetries: 1 }).generate(ask()));
    await vi.runAllTimersAsync();
    const error = await pending;
    expect(mock.doGenerateCalls).toHaveLength(2);
    expect(error).toMatchObject({ code: 'MODEL_CALL_FAILED', statusCode: 503 });
    expect((error as ModelCallError).cause).toMatchObject({ name: 'AI_RetryError' });
  });

  it('makes exactly one attempt with maxRetries: 0', async () => {
    const mock = new MockLanguageModelV3({ doGenerate: () => Promise.reject(apiError(429, true)) });
    const error = await rejectionOf(aiSdkModel(mock, { maxRetries: 0 }).generate(ask()));
    expect(mock.doGenerateCalls).toHaveLength(1);
    expect(error).toMatchObject({ code: 'MODEL_CALL_FAILED', statusCode: 429 });
  });

  it('reports a reply the provider could not produce as MODEL_CALL_FAILED, not a TypeError', async () => {
    const mock = new MockLanguageModelV3({ doGenerate: async () => undefined as unknown as GenerateResult });
    const error = await rejectionOf(aiSdkModel(mock).generate(ask()));
    expect(error).toMatchObject({ code: 'MODEL_CALL_FAILED' });
  });

  it('resolves a model id string through the AI SDK’s global provider, and names it when the call fails', async () => {
    const good = mockModel(reply('via the global provider'));
    const bad = new MockLanguageModelV3({ doGenerate: () => Promise.reject(new Error('boom')) });
    const previous = globalThis.AI_SDK_DEFAULT_PROVIDER;
    globalThis.AI_SDK_DEFAULT_PROVIDER = new MockProviderV3({ languageModels: { good, bad } });
    try {
      await expect(aiSdkModel('good').generate(ask())).resolves.toMatchObject({ content: 'via the global provider' });
      const error = await rejectionOf(aiSdkModel('bad').generate(ask()));
      expect(error).toMatchObject({
        code: 'MODEL_CALL_FAILED',
        model: '"bad"',
        message: 'Model call to "bad" failed: boom',
      });
    } finally {
      globalThis.AI_SDK_DEFAULT_PROVIDER = previous;
    }
  });
});

describe('error classes', () => {
  class AppModelCallError extends ModelCallError {}
  class AppModelRequestError extends ModelRequestError {}
  const callError = new ModelCallError({ model: 'm', cause: new Error('x') });
  const requestError = new ModelRequestError({ path: 'messages', problem: 'bad' });

  it('ModelCallError.isInstance matches its own instances and subclasses only', () => {
    expect(ModelCallError.isInstance(callError)).toBe(true);
    expect(ModelCallError.isInstance(new AppModelCallError({ model: 'm', cause: 1 }))).toBe(true);
    expect(ModelCallError.isInstance(requestError)).toBe(false);
    expect(ModelCallError.isInstance(new SignalyardError({ code: 'MODEL_CALL_FAILED', message: 'm' }))).toBe(false);
    expect(ModelCallError.isInstance(new AbortedError())).toBe(false);
    expect(ModelCallError.isInstance(new Error('x'))).toBe(false);
    expect(ModelCallError.isInstance(null)).toBe(false);
  });

  it('ModelRequestError.isInstance matches its own instances and subclasses only', () => {
    expect(ModelRequestError.isInstance(requestError)).toBe(true);
    expect(ModelRequestError.isInstance(new AppModelRequestError({ path: '', problem: 'p' }))).toBe(true);
    expect(ModelRequestError.isInstance(callError)).toBe(false);
    expect(ModelRequestError.isInstance(new SignalyardError({ code: 'MODEL_REQUEST_INVALID', message: 'm' }))).toBe(
      false,
    );
    expect(ModelRequestError.isInstance(undefined)).toBe(false);
  });

  it('both are SignalyardErrors with stable codes and their class name', () => {
    expect(SignalyardError.isInstance(callError)).toBe(true);
    expect(SignalyardError.isInstance(requestError)).toBe(true);
    expect([callError.name, callError.code]).toEqual(['ModelCallError', 'MODEL_CALL_FAILED']);
    expect([requestError.name, requestError.code]).toEqual(['ModelRequestError', 'MODEL_REQUEST_INVALID']);
    expect(requestError.message).toBe('Invalid model request at messages: bad');
    expect(new ModelRequestError({ path: '', problem: 'p' }).message).toBe('Invalid model request: p');
  });
});

// Shared helpers for the pipeline tests (not a test file: vitest only runs `*.test.ts`).
import { expect } from 'vitest';
import {
  isSignalyardError,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type SignalyardError,
} from '@signalyard/core';
import {
  definePipeline,
  PipelineRuntime,
  type PipelineConfig,
  type PipelineEvent,
  type StageConfig,
} from '@signalyard/pipeline';

/** Calls `fn` and returns what it threw; fails the test when it returns normally. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return expect.unreachable('expected the call to throw, but it returned');
}

/** Awaits `promise` and returns its rejection reason; fails the test when it resolves. */
export async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return expect.unreachable('expected a rejection, but the promise resolved');
}

/** Asserts that `error` is a SignalyardError with `code` and returns it. */
export function expectCode(error: unknown, code: string): SignalyardError {
  if (!isSignalyardError(error))
    return expect.unreachable(`expected a SignalyardError with code ${code}, got ${String(error)}`);
  expect(error.code).toBe(code);
  return error;
}

export async function rejectsCode(promise: PromiseLike<unknown>, code: string): Promise<SignalyardError> {
  return expectCode(await rejection(promise), code);
}

export function throwsCode(fn: () => unknown, code: string): SignalyardError {
  return expectCode(thrown(fn), code);
}

/** Drains an async iterable into an array. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** A promise with its resolve/reject exposed (Node 20 has no Promise.withResolvers). */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A tiny ChatModel answering every request with `reply` and recording the requests. */
export function echoModel(reply = 'ok'): ChatModel & { readonly calls: ChatRequest[] } {
  const calls: ChatRequest[] = [];
  return {
    calls,
    async generate(request: ChatRequest): Promise<ChatResponse> {
      calls.push(request);
      return { content: reply };
    },
  };
}

/** A stage that returns `output` and routes by `rest`. */
export function stage(
  name: string,
  output: Record<string, unknown> | undefined = {},
  rest: Partial<StageConfig> = {},
): StageConfig {
  return { name, run: () => output, ...rest };
}

/** A runtime over a pipeline built from `config` (name defaults to "test"). */
export function runtimeOf(
  config: Omit<PipelineConfig, 'name'> & { name?: string },
  model?: ChatModel,
): PipelineRuntime {
  return new PipelineRuntime(definePipeline({ name: 'test', ...config }), model === undefined ? {} : { model });
}

/** The types of `events`, for compact assertions. */
export function types(events: readonly PipelineEvent[]): string[] {
  return events.map((e) => (e.type === 'stage_start' || e.type === 'stage_end' ? `${e.type}:${e.stage}` : e.type));
}

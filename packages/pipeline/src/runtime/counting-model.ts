import { streamChat, describeValue } from '@signalyard/core';
import type { ChatModel, ChatRequest, ChatResponse, ChatStreamPart } from '@signalyard/core';
import { PipelineBoundError } from '../errors/pipeline-bound-error.js';
import { PipelineUsageError } from '../errors/pipeline-usage-error.js';
import type { RunScope } from './run-scope.js';

/**
 * A model whose every call — `generate`, or `stream` (one call per stream) — is counted against
 * the run's `maxLlmCalls` when it is made. `stream` reads the model through `streamChat` (its
 * own `stream`, or `generate` as parts), and hands each text delta the stage reads to `onDelta`
 * (`undefined`: nobody listens), and each call's whole response to `onResponse` (for `stream`,
 * the `finish` part's; `undefined`: nobody listens). A request that is not an object fails with
 * `PIPELINE_ARGUMENT_INVALID` (and is not counted); every failure is a rejection — for `stream`,
 * of the first `next()`.
 * @internal
 */
export function countingModel(
  scope: RunScope,
  inner: ChatModel,
  stage: string,
  abortSignal: AbortSignal,
  onDelta: ((delta: string) => void) | undefined,
  onResponse: ((request: ChatRequest, response: ChatResponse) => void) | undefined,
): Required<ChatModel> {
  /** Counts the call and returns the request with this stage's defaults; throws when it may not be made. */
  const begin = (request: ChatRequest): ChatRequest => {
    if (typeof request !== 'object' || (request as unknown) === null) {
      throw new PipelineUsageError({
        code: 'PIPELINE_ARGUMENT_INVALID',
        argument: 'request',
        message: `Invalid model request ${describeValue(request)} from stage ${JSON.stringify(stage)}: expected a ChatRequest object { messages, ... }`,
      });
    }
    const st = scope.state;
    if (st.llmCalls + 1 > scope.maxLlmCalls) {
      scope.llmRefused = true;
      throw new PipelineBoundError({ bound: 'maxLlmCalls', limit: scope.maxLlmCalls, stage });
    }
    st.llmCalls++;
    if (request.abortSignal !== undefined && request.agentId !== undefined) return request;
    return { ...request, abortSignal: request.abortSignal ?? abortSignal, agentId: request.agentId ?? stage };
  };
  return {
    // async: the bound is checked synchronously when the call is made, and every failure is a rejection
    async generate(request: ChatRequest): Promise<ChatResponse> {
      const made = begin(request);
      const response = await inner.generate(made);
      onResponse?.(made, response);
      return response;
    },
    stream(request: ChatRequest): AsyncIterable<ChatStreamPart> {
      let parts: AsyncIterable<ChatStreamPart>;
      let made: ChatRequest;
      try {
        made = begin(request);
        parts = streamChat(inner, made);
      } catch (error) {
        return failedStream(error);
      }
      if (onDelta === undefined && onResponse === undefined) return parts;
      const answered =
        onResponse === undefined
          ? undefined
          : (response: ChatResponse): void => {
              onResponse(made, response);
            };
      return forwardParts(parts, onDelta, answered);
    },
  };
}

/** `parts` as they are, handing each text delta to `onDelta` and the finish part's response to `onResponse` as the reader takes them. */
async function* forwardParts(
  parts: AsyncIterable<ChatStreamPart>,
  onDelta: ((delta: string) => void) | undefined,
  onResponse: ((response: ChatResponse) => void) | undefined,
): AsyncGenerator<ChatStreamPart, void, undefined> {
  for await (const part of parts) {
    if (part.type === 'text-delta') onDelta?.(part.delta);
    else if (part.type === 'finish') onResponse?.(part.response);
    yield part;
  }
}

/** A stream whose first `next()` rejects with `error` (then it is done). */
function failedStream(error: unknown): AsyncIterable<ChatStreamPart> {
  let failed = false;
  const done = (): Promise<IteratorResult<ChatStreamPart>> => Promise.resolve({ done: true, value: undefined });
  return {
    [Symbol.asyncIterator]: () => ({
      next(): Promise<IteratorResult<ChatStreamPart>> {
        if (failed) return done();
        failed = true;
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the call's own failure, unchanged
        return Promise.reject(error);
      },
      return: done,
    }),
  };
}

import { AbortedError, describeValue } from '@signalyard/core';
import { isAbortSignal } from '@signalyard/core/internal';
import type { ModelMessage, ToolSet } from 'ai';
import { ModelRequestError } from './errors/model-request-error.js';
import { toAiSdkTools } from './to-ai-sdk-tools.js';
import { toModelMessages } from './to-model-messages.js';

/** A `ChatRequest` checked and mapped to what `generateText` / `streamText` take. @internal */
export interface MappedChatRequest {
  readonly messages: ModelMessage[];
  readonly tools: ToolSet | undefined;
  readonly abortSignal: AbortSignal | undefined;
}

/**
 * Checks a `ChatRequest` and maps it to AI SDK messages and tools, in the order both `generate`
 * and `stream` rely on: the request's shape, its `abortSignal` (an already aborted signal
 * rejects before any mapping), then messages and tools.
 *
 * @throws ModelRequestError `MODEL_REQUEST_INVALID` for a request that cannot be mapped.
 * @throws AbortedError `ABORTED` when the signal has already fired.
 * @internal
 */
export function readChatRequest(request: unknown): MappedChatRequest {
  if (typeof request !== 'object' || request === null) {
    throw new ModelRequestError({
      path: '',
      problem: `expected a ChatRequest ({ messages, tools?, abortSignal? }), got ${describeValue(request)}`,
    });
  }
  const abortSignal: unknown = (request as { abortSignal?: unknown }).abortSignal;
  if (abortSignal !== undefined && !isAbortSignal(abortSignal)) {
    throw new ModelRequestError({
      path: 'abortSignal',
      problem: `expected an AbortSignal, got ${describeValue(abortSignal)}`,
    });
  }
  if (abortSignal?.aborted === true) throw new AbortedError({ cause: abortSignal.reason });
  const messages = toModelMessages((request as { messages?: unknown }).messages);
  const tools = toAiSdkTools((request as { tools?: unknown }).tools);
  return { messages, tools, abortSignal };
}

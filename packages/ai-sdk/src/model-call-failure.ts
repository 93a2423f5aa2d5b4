import { AbortedError, type ChatResponse } from '@signalyard/core';
import type { LanguageModelUsage } from 'ai';
import { ModelCallError } from './errors/model-call-error.js';

/**
 * The error a failed model call rejects with: `AbortedError` when the call's signal has fired
 * (whatever the AI SDK threw then), else a `ModelCallError` wrapping the original error, with the
 * HTTP status when there was one.
 * @internal
 */
export function modelCallFailure(
  error: unknown,
  abortSignal: AbortSignal | undefined,
  model: string,
): AbortedError | ModelCallError {
  if (abortSignal?.aborted === true) {
    return AbortedError.isInstance(error) ? error : new AbortedError({ cause: abortSignal.reason });
  }
  const statusCode = statusCodeOf(error);
  return new ModelCallError(statusCode === undefined ? { model, cause: error } : { model, cause: error, statusCode });
}

/** `ChatResponse.usage` from the AI SDK's usage: only the counts the provider reported; none → undefined. @internal */
export function toChatUsage(usage: LanguageModelUsage | undefined): ChatResponse['usage'] {
  if (usage === undefined) return undefined;
  const { inputTokens, outputTokens } = usage;
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  return {
    ...(inputTokens === undefined ? {} : { inputTokens }),
    ...(outputTokens === undefined ? {} : { outputTokens }),
  };
}

/** The HTTP status of an AI SDK `APICallError`, also when it is the last error of a `RetryError`. */
function statusCodeOf(error: unknown): number | undefined {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 3; depth++) {
    const { statusCode, lastError } = e as { statusCode?: unknown; lastError?: unknown };
    if (typeof statusCode === 'number') return statusCode;
    e = lastError;
  }
  return undefined;
}

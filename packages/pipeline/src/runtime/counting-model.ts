import type { ChatModel, ChatRequest, ChatResponse } from '@signalyard/core';
import { PipelineBoundError } from '../errors/pipeline-bound-error.js';
import { PipelineUsageError } from '../errors/pipeline-usage-error.js';
import { describeSafely } from '../shared/error-message.js';
import type { RunScope } from './run-scope.js';

/**
 * A model whose every `generate` call is counted against the run's `maxLlmCalls`. A request
 * that is not an object rejects with `PIPELINE_ARGUMENT_INVALID` (and is not counted).
 * @internal
 */
export function countingModel(scope: RunScope, inner: ChatModel, stage: string, abortSignal: AbortSignal): ChatModel {
  return {
    // async: the bound is checked synchronously when the call is made, and every failure is a rejection
    async generate(request: ChatRequest): Promise<ChatResponse> {
      if (typeof request !== 'object' || (request as unknown) === null) {
        throw new PipelineUsageError({
          code: 'PIPELINE_ARGUMENT_INVALID',
          argument: 'request',
          message: `Invalid model request ${describeSafely(request)} from stage ${JSON.stringify(stage)}: expected a ChatRequest object { messages, ... }`,
        });
      }
      const st = scope.state;
      if (st.llmCalls + 1 > scope.maxLlmCalls) {
        scope.llmRefused = true;
        throw new PipelineBoundError({ bound: 'maxLlmCalls', limit: scope.maxLlmCalls, stage });
      }
      st.llmCalls++;
      let req = request;
      if (request.abortSignal === undefined || request.agentId === undefined) {
        req = { ...request, abortSignal: request.abortSignal ?? abortSignal, agentId: request.agentId ?? stage };
      }
      return inner.generate(req);
    },
  };
}

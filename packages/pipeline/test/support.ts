// Shared helpers for the pipeline tests (not a test file: vitest only runs `*.test.ts`).
import type { ChatModel, ChatRequest, ChatResponse } from '@signalyard/core';
import {
  definePipeline,
  PipelineRuntime,
  type PipelineConfig,
  type PipelineEvent,
  type StageConfig,
} from '@signalyard/pipeline';
export { thrown, expectCode, rejectsCode, throwsCode, collect, deferred, type Deferred } from '@signalyard/test-utils';

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

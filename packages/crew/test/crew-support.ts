// Helpers shared by the executor tests (not a test file itself).
import { AbortedError, type ChatModel, type ChatRequest, type ChatResponse } from '@signalyard/core';
import {
  CrewRunError,
  type CrewEvent,
  type CrewExecutor,
  type CrewResponse,
  type CrewRunOptions,
} from '@signalyard/crew';
export { deferred } from '@signalyard/test-utils';

/** Every event of one streamed run. */
export async function collect(executor: CrewExecutor, input: string, opts?: CrewRunOptions): Promise<CrewEvent[]> {
  const events: CrewEvent[] = [];
  for await (const event of executor.executeStream(input, opts)) events.push(event);
  return events;
}

/** The final event's response, or a failure naming what came instead. */
export function endOf(events: readonly CrewEvent[]): CrewResponse {
  const last = events.at(-1);
  if (last?.type !== 'end') throw new Error(`expected an end event, got ${JSON.stringify(last)}`);
  return last.response;
}

/**
 * The `type`s of the events, compactly: `handoff:a>b`, `agent_response:a`, … — without the
 * `text_delta`s (how many there are depends on the model's chunking; test/crew-streaming.test.ts
 * covers them).
 */
export function trace(events: readonly CrewEvent[]): string[] {
  return events
    .filter((e) => e.type !== 'text_delta')
    .map((e) => {
      switch (e.type) {
        case 'agent_start':
        case 'agent_response':
          return `${e.type}:${e.agentId}${e.group === undefined ? '' : `@${e.group}`}`;
        case 'handoff':
          return `handoff:${e.from}>${e.to}:${e.via}`;
        case 'parallel_member_end':
          return `member_end:${e.agentId}:${e.status}`;
        case 'terminate':
          return `terminate:${e.reason}`;
        case 'tool_start':
        case 'tool_result':
          return `${e.type}:${e.call.name}`;
        default:
          return e.type;
      }
    });
}

/** The rejection of `promise`, which must be a CrewRunError. */
export async function runError(promise: Promise<unknown>): Promise<CrewRunError> {
  try {
    await promise;
  } catch (error) {
    if (CrewRunError.isInstance(error)) return error;
    throw new Error(`expected a CrewRunError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a rejection, but the run succeeded');
}

/** A model that never answers unless aborted (then it rejects with AbortedError); records its requests. */
export function hangingModel(): ChatModel & { readonly requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    requests,
    generate(request: ChatRequest): Promise<ChatResponse> {
      requests.push(request);
      return new Promise((_resolve, reject) => {
        request.abortSignal?.addEventListener('abort', () => {
          reject(new AbortedError({ cause: request.abortSignal?.reason }));
        });
      });
    },
  };
}

/** A model that never answers and ignores its abortSignal entirely. */
export function deafModel(): ChatModel & { readonly requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    requests,
    generate(request: ChatRequest): Promise<ChatResponse> {
      requests.push(request);
      return new Promise(() => undefined);
    },
  };
}

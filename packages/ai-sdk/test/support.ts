import { MockLanguageModelV3 } from 'ai/test';
import { deferred } from '@signalyard/test-utils';
export { deferred, rejection as rejectionOf } from '@signalyard/test-utils';

/** What a mock's `doGenerate` resolves with (the AI SDK's `LanguageModelV3GenerateResult`). */
export type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
/** One content part of a `GenerateResult`. */
export type ContentPart = GenerateResult['content'][number];

const usage = (input: number | undefined, output: number | undefined): GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** A provider reply holding `content` (a text, or parts), with token usage. */
export function reply(
  content: string | readonly ContentPart[],
  tokens: { input?: number; output?: number } = { input: 10, output: 5 },
): GenerateResult {
  return {
    content: typeof content === 'string' ? [{ type: 'text', text: content }] : [...content],
    finishReason: { unified: typeof content === 'string' ? 'stop' : 'tool-calls', raw: undefined },
    usage: usage(tokens.input, tokens.output),
    warnings: [],
  };
}

/** A provider tool-call part; `input` is the JSON text the provider sends. */
export function toolCallPart(toolCallId: string, toolName: string, input: unknown): ContentPart {
  return { type: 'tool-call', toolCallId, toolName, input: typeof input === 'string' ? input : JSON.stringify(input) };
}

/** A mock model answering its n-th call with `replies[n - 1]`. */
export function mockModel(...replies: GenerateResult[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({ provider: 'mock-provider', modelId: 'mock-model', doGenerate: replies });
}

/** What a mock's `doStream` resolves with (the AI SDK's `LanguageModelV3StreamResult`). */
type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>;
/** One part of a provider's reply stream (`LanguageModelV3StreamPart`). */
export type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

/** The provider stream parts of a reply: `text` split into the given chunks, then tool calls, then `finish`. */
export function streamParts(
  chunks: readonly string[],
  opts: {
    toolCalls?: readonly { id: string; name: string; input: unknown }[];
    tokens?: { input?: number; output?: number };
  } = {},
): StreamPart[] {
  const { toolCalls = [], tokens = { input: 10, output: 5 } } = opts;
  const parts: StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (chunks.length > 0) {
    parts.push({ type: 'text-start', id: 't1' });
    for (const delta of chunks) parts.push({ type: 'text-delta', id: 't1', delta });
    parts.push({ type: 'text-end', id: 't1' });
  }
  for (const call of toolCalls) {
    parts.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.name,
      input: typeof call.input === 'string' ? call.input : JSON.stringify(call.input),
    });
  }
  parts.push({
    type: 'finish',
    finishReason: { unified: toolCalls.length > 0 ? 'tool-calls' : 'stop', raw: undefined },
    usage: usage(tokens.input, tokens.output),
  });
  return parts;
}

/** A mock model streaming its n-th call's reply from `replies[n - 1]` (lists of provider stream parts). */
export function mockStreamModel(...replies: readonly StreamPart[][]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'mock-provider',
    modelId: 'mock-model',
    doStream: replies.map((parts) => ({ stream: readableOf(parts) })),
  });
}

/** A readable stream of `parts`, then closed. */
export function readableOf<T>(parts: readonly T[]): ReadableStream<T> {
  return new ReadableStream<T>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/**
 * A provider stream the test drives by hand: `push` parts, `close` it; `cancelled` resolves with
 * the reason when its reader cancels it. It never looks at the abort signal (like a provider
 * that ignores it).
 */
export function manualStream(): {
  stream: ReadableStream<StreamPart>;
  push: (...parts: StreamPart[]) => void;
  close: () => void;
  cancelled: Promise<unknown>;
} {
  let controller!: ReadableStreamDefaultController<StreamPart>;
  const cancelled = deferred<unknown>();
  const stream = new ReadableStream<StreamPart>({
    start(c) {
      controller = c;
    },
    cancel(reason) {
      cancelled.resolve(reason);
    },
  });
  return {
    stream,
    push: (...parts) => {
      for (const part of parts) controller.enqueue(part);
    },
    close: () => {
      controller.close();
    },
    cancelled: cancelled.promise,
  };
}

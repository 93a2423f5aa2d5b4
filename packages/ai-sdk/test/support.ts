import { MockLanguageModelV3 } from 'ai/test';

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

/** A promise with its settle functions outside, for ordering without sleeps. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The rejection of `promise` (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}

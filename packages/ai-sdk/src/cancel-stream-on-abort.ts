import type { LanguageModel } from 'ai';

/** What this module needs of a provider model (AI SDK specification v3 or v2). */
interface ProviderModel {
  readonly specificationVersion: unknown;
  readonly provider: unknown;
  readonly modelId: unknown;
  readonly supportedUrls: unknown;
  doGenerate(options: unknown): unknown;
  doStream(options: { readonly abortSignal?: AbortSignal }): PromiseLike<{ readonly stream: ReadableStream<unknown> }>;
}

/**
 * A view of `model` whose streamed replies are cancelled when the call's abort signal fires.
 *
 * `streamText` hands the signal to the provider, and HTTP providers cancel their request with
 * it; but the AI SDK never cancels the provider's stream itself, so a provider that ignores the
 * signal would go on producing a reply nobody reads. Piping the provider's stream through a pipe
 * that the signal aborts cancels it either way. Model id strings (resolved by the AI SDK's global
 * provider at call time) are returned as they are: their provider receives the signal.
 * @internal
 */
export function cancelStreamOnAbort(model: LanguageModel): LanguageModel {
  if (typeof model === 'string') return model;
  const target = model as unknown as ProviderModel;
  const view: ProviderModel = {
    get specificationVersion() {
      return target.specificationVersion;
    },
    get provider() {
      return target.provider;
    },
    get modelId() {
      return target.modelId;
    },
    get supportedUrls() {
      return target.supportedUrls;
    },
    doGenerate: (options) => target.doGenerate(options),
    doStream: async (options) => {
      const result = await target.doStream(options);
      const { abortSignal } = options;
      if (abortSignal === undefined) return result;
      // preventCancel stays false: aborting the pipe cancels the provider's stream.
      return { ...result, stream: result.stream.pipeThrough(new TransformStream(), { signal: abortSignal }) };
    },
  };
  return view as unknown as LanguageModel;
}

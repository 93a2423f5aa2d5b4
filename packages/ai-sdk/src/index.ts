/**
 * `@signalyard/ai-sdk`: adapts any Vercel AI SDK language model (`ai` 6.x) to Signalyard's
 * `ChatModel`, so crews, pipelines and plugins can run on OpenAI, Anthropic, Google, a local
 * model or any other AI SDK provider.
 *
 * @packageDocumentation
 */
export { aiSdkModel } from './ai-sdk-model.js';
export type { AiSdkModelOptions } from './ai-sdk-model-options.js';
export { ModelCallError } from './errors/model-call-error.js';
export type { ModelCallErrorCode } from './errors/model-call-error.js';
export { ModelRequestError } from './errors/model-request-error.js';
export type { ModelRequestErrorCode } from './errors/model-request-error.js';

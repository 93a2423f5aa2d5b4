/**
 * `@signalyard/ai-sdk`: adapts any Vercel AI SDK language model (`ai` 6.x) to Signalyard's
 * `ChatModel` — generating and streaming — so crews, pipelines and plugins can run on OpenAI,
 * Anthropic, Google, a local model or any other AI SDK provider; and streams Signalyard turns to
 * the AI SDK's UI (`useChat` / `Chat`) as its UI message stream, with transcripts for a page
 * reload, streams resumed after a reconnect (`useChat({ resume: true })`) and tool approvals
 * answered in the browser.
 *
 * @packageDocumentation
 */
export { aiSdkModel } from './ai-sdk-model.js';
export type { AiSdkModelOptions } from './ai-sdk-model-options.js';
export { toUIMessageStream } from './ui/to-ui-message-stream.js';
export type { ToUIMessageStreamOptions } from './ui/to-ui-message-stream.js';
export { toUIMessageStreamResponse } from './ui/to-ui-message-stream-response.js';
export type { ToUIMessageStreamResponseInit } from './ui/to-ui-message-stream-response.js';
export { resumeUIMessageStream, resumeUIMessageStreamResponse } from './ui/resume-ui-message-stream.js';
export type { TurnStreamResumer } from './ui/resume-ui-message-stream.js';
export { transcriptToUIMessages } from './ui/transcript-to-ui-messages.js';
export { approvalsFromUIMessages } from './ui/approvals-from-ui-messages.js';
export type {
  HandoffData,
  RejectedData,
  RouteData,
  SignalyardUIDataTypes,
  SignalyardUIMessage,
} from './ui/signalyard-ui-message.js';
export { ModelCallError } from './errors/model-call-error.js';
export type { ModelCallErrorCode } from './errors/model-call-error.js';
export { ModelRequestError } from './errors/model-request-error.js';
export type { ModelRequestErrorCode } from './errors/model-request-error.js';
export { UIMessageError } from './errors/ui-message-error.js';
export type { UIMessageErrorCode } from './errors/ui-message-error.js';

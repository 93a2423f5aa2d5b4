import { AbortedError, type ChatResponse, type ChatStreamPart, type ToolCall } from '@signalyard/core';
import { onAbort } from '@signalyard/core/internal';
import { streamText, type LanguageModel, type LanguageModelUsage, type TextStreamPart, type ToolSet } from 'ai';
import type { CallSettings } from './ai-sdk-model-options.js';
import { modelCallFailure, toChatUsage } from './model-call-failure.js';
import type { MappedChatRequest } from './read-chat-request.js';

/** What {@link streamChatParts} needs besides the request. @internal */
export interface StreamChatPartsOptions {
  /** The model to stream from (already wrapped by `cancelStreamOnAbort`). */
  readonly model: LanguageModel;
  readonly settings: CallSettings;
  /** The model's name for error messages. */
  readonly label: string;
}

/**
 * One single-step `streamText` call as Signalyard `ChatStreamPart`s: a `text-delta` per non-empty
 * text delta, a `tool-call` per complete call the provider did not run itself (arguments parsed
 * by the AI SDK, or the raw text when they are not JSON), then one `finish` with the whole
 * response — so the deltas concatenate to `finish.response.content` and the calls equal
 * `finish.response.toolCalls`.
 *
 * The call gets its own abort signal, linked to the request's: it fires when the request is
 * aborted and when the reader stops early (`break`, an error), which cancels the provider's
 * request and stream. An abort rejects the pending `next()` with `AbortedError` at once, whether
 * or not the provider honours the signal; a provider error part rejects with `ModelCallError`.
 * @internal
 */
export async function* streamChatParts(
  request: MappedChatRequest,
  { model, settings, label }: StreamChatPartsOptions,
): AsyncGenerator<ChatStreamPart, void, undefined> {
  const { messages, tools, abortSignal } = request;
  const call = new AbortController();
  const unlink =
    abortSignal === undefined
      ? undefined
      : onAbort(abortSignal, () => {
          call.abort();
        });
  let complete = false;
  try {
    let reader: ReadableStreamDefaultReader<TextStreamPart<ToolSet>>;
    try {
      reader = streamText({
        model,
        messages,
        allowSystemInMessages: true,
        ...(tools === undefined ? {} : { tools }),
        abortSignal: call.signal,
        // Errors arrive as `error` parts and reject the reader's next(): nothing to log.
        onError: () => undefined,
        ...settings,
      }).fullStream.getReader();
    } catch (error) {
      throw modelCallFailure(error, abortSignal, label);
    }
    cancelOnAbort(reader, call.signal);

    let content = '';
    const toolCalls: ToolCall[] = [];
    let usage: LanguageModelUsage | undefined;
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        throw modelCallFailure(error, abortSignal, label);
      }
      if (abortSignal?.aborted === true) throw new AbortedError({ cause: abortSignal.reason });
      if (next.done) break;
      const part = next.value;
      switch (part.type) {
        case 'text-delta':
          if (part.text !== '') {
            content += part.text;
            yield { type: 'text-delta', delta: part.text };
          }
          break;
        case 'tool-call': {
          // A call the provider ran itself (a provider-defined tool) is not Signalyard's to run.
          if (part.providerExecuted === true) break;
          const toolCall: ToolCall = { id: part.toolCallId, name: part.toolName, arguments: part.input };
          toolCalls.push(toolCall);
          yield { type: 'tool-call', call: toolCall };
          break;
        }
        case 'error':
          throw modelCallFailure(part.error, abortSignal, label);
        case 'abort':
          throw new AbortedError({ cause: abortSignal?.reason ?? part.reason });
        case 'finish':
          usage = part.totalUsage;
          break;
        default:
          break;
      }
    }
    const response: ChatResponse = { content };
    if (toolCalls.length > 0) response.toolCalls = toolCalls;
    const chatUsage = toChatUsage(usage);
    if (chatUsage !== undefined) response.usage = chatUsage;
    complete = true;
    yield { type: 'finish', response };
  } finally {
    unlink?.();
    // A reader that stopped early, or a failure: cancel the provider's request and stream.
    if (!complete) call.abort();
  }
}

/** Cancels `reader` when `signal` aborts (at once when it has): that ends a pending read at once, even when the provider never answers. */
function cancelOnAbort(reader: ReadableStreamDefaultReader<unknown>, signal: AbortSignal): void {
  const cancel = (): void => {
    reader.cancel().catch(() => undefined);
  };
  if (signal.aborted) cancel();
  else onAbort(signal, cancel);
}

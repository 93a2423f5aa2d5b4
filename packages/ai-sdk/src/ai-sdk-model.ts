import type { ChatModel, ChatRequest, ChatResponse, ChatStreamPart, ToolCall } from '@signalyard/core';
import { untilAborted } from '@signalyard/core/internal';
import { generateText, type LanguageModel } from 'ai';
import { resolveAiSdkModelOptions, type AiSdkModelOptions } from './ai-sdk-model-options.js';
import { cancelStreamOnAbort } from './cancel-stream-on-abort.js';
import { modelCallFailure, toChatUsage } from './model-call-failure.js';
import { readChatRequest } from './read-chat-request.js';
import { streamChatParts } from './stream-chat-parts.js';

/**
 * Adapts any Vercel AI SDK language model (`ai` 6.x) to Signalyard's `ChatModel`, so crews,
 * pipelines and plugins can run on a real provider.
 *
 * Each `generate` makes **one** `generateText` call, and each `stream` **one** `streamText` call —
 * a single step: tools are offered to the model but never run by the AI SDK; the model's tool
 * calls come back as `ToolCall`s for Signalyard to run. Both map the request and the reply the
 * same way.
 *
 * - **messages** map one for one, in order: `system` and `user` keep their text; an `assistant`
 *   message with `toolCalls` becomes a text part (when its text is not empty) and one
 *   `tool-call` part per call (`{ toolCallId, toolName, input }`); a `tool` message becomes a
 *   `tool-result` part (`{ toolCallId, toolName, output: { type: 'text', value } }`), the tool
 *   name taken from the assistant message that made the call. System messages stay where they
 *   are in the list (sent with `allowSystemInMessages`). `ChatMessage.name` has no AI SDK
 *   counterpart and is not sent.
 * - **tools**: each `ToolSpec` becomes `tool({ description, inputSchema: jsonSchema(parameters) })`
 *   without `execute`.
 * - **reply**: `content` is the reply text; `toolCalls` (present only when the model asked for
 *   tools) are `{ id: toolCallId, name: toolName, arguments: input }`, in the model's order,
 *   including calls to tools that were not offered or with input that is not JSON (the raw text is
 *   then the `arguments`): Signalyard answers those with a tool error. Calls the provider ran
 *   itself (`providerExecuted`) are left out. `usage` carries `inputTokens` / `outputTokens` when
 *   the provider reports them.
 * - **streaming**: `stream(request)` yields a `text-delta` part per non-empty text delta as the
 *   provider sends it, a `tool-call` part per complete call (arguments parsed as above), then one
 *   `finish` part carrying the whole `ChatResponse` (`content` = the deltas concatenated,
 *   `toolCalls` = the `tool-call` parts in order, `usage`). Crews and the Runner read it through
 *   core's `streamChat`. A reader that stops early (`break`) cancels the provider's request and
 *   stream.
 * - **abort**: `request.abortSignal` is passed to the AI SDK (which cancels the provider
 *   request); `generate` and the stream's pending `next()` reject with `AbortedError`
 *   (`ABORTED`, the abort reason as `cause`) as soon as it fires — before the call (no provider
 *   call is made) or during it, even if the provider ignores the signal.
 *
 * @throws ConfigError `CONFIG_INVALID` (at once) when `model` is neither a language model nor a
 * non-empty model id, or an option is unknown or out of range — listing every problem.
 * `generate` (and the stream's first `next()`) rejects with {@link ModelRequestError}
 * (`MODEL_REQUEST_INVALID`) for a request that cannot be mapped (no messages, a malformed message
 * or tool spec, a `tool` message answering an unknown call id, a tool call left unanswered); both
 * reject with {@link ModelCallError} (`MODEL_CALL_FAILED`, the original error as `cause`) when
 * the provider or the AI SDK fails — for a stream also when the provider reports an error
 * mid-reply — and with `AbortedError` (`ABORTED`) when aborted.
 *
 * @example
 * ```ts
 * import { openai } from '@ai-sdk/openai';          // reads OPENAI_API_KEY
 * import { aiSdkModel } from '@signalyard/ai-sdk';
 * import { CrewExecutor, loadCrewConfig } from '@signalyard/crew';
 *
 * const model = aiSdkModel(openai('gpt-4o-mini'), { temperature: 0 });
 * const executor = new CrewExecutor({ crew: await loadCrewConfig('crew.yaml'), model });
 *
 * const reply = await model.generate({ messages: [{ role: 'user', content: 'Say hi' }] });
 * reply.content;   // 'Hi!'
 * reply.usage;     // { inputTokens: 9, outputTokens: 3 }
 *
 * for await (const part of model.stream!({ messages: [{ role: 'user', content: 'Say hi' }] })) {
 *   if (part.type === 'text-delta') process.stdout.write(part.delta);    // 'H', 'i!'
 *   else if (part.type === 'finish') console.log(part.response.usage);
 * }
 * ```
 */
export function aiSdkModel(model: LanguageModel, opts?: AiSdkModelOptions): ChatModel {
  const { settings, label } = resolveAiSdkModelOptions(model, opts);
  const streamingModel = cancelStreamOnAbort(model);

  async function generate(request: ChatRequest): Promise<ChatResponse> {
    const { messages, tools, abortSignal } = readChatRequest(request);
    let result: Awaited<ReturnType<typeof generateText>>;
    try {
      result = await untilAborted(
        generateText({
          model,
          messages,
          allowSystemInMessages: true,
          ...(tools === undefined ? {} : { tools }),
          ...(abortSignal === undefined ? {} : { abortSignal }),
          ...settings,
        }),
        abortSignal,
      );
    } catch (error) {
      // An abort wins over whatever the call threw: the signal may have fired while it was in flight.
      throw modelCallFailure(error, abortSignal, label);
    }

    const response: ChatResponse = { content: result.text };
    let toolCalls: ToolCall[] | undefined;
    for (const call of result.toolCalls) {
      // A call the provider ran itself (a provider-defined tool) is not Signalyard's to run.
      if ((call as { providerExecuted?: boolean }).providerExecuted === true) continue;
      (toolCalls ??= []).push({ id: call.toolCallId, name: call.toolName, arguments: call.input });
    }
    if (toolCalls !== undefined) response.toolCalls = toolCalls;
    const usage = toChatUsage(result.usage);
    if (usage !== undefined) response.usage = usage;
    return response;
  }

  async function* stream(request: ChatRequest): AsyncGenerator<ChatStreamPart, void, undefined> {
    yield* streamChatParts(readChatRequest(request), { model: streamingModel, settings, label });
  }

  return Object.freeze({ generate, stream });
}

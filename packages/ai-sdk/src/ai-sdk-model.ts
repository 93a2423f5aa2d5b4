import {
  AbortedError,
  describeValue,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type ToolCall,
} from '@signalyard/core';
import { generateText, type LanguageModel } from 'ai';
import { resolveAiSdkModelOptions, type AiSdkModelOptions } from './ai-sdk-model-options.js';
import { ModelCallError } from './errors/model-call-error.js';
import { ModelRequestError } from './errors/model-request-error.js';
import { toAiSdkTools } from './to-ai-sdk-tools.js';
import { toModelMessages } from './to-model-messages.js';

/**
 * Adapts any Vercel AI SDK language model (`ai` 6.x) to Signalyard's `ChatModel`, so crews,
 * pipelines and plugins can run on a real provider.
 *
 * Each `generate` makes **one** `generateText` call — a single step: tools are offered to the
 * model but never run by the AI SDK; the model's tool calls come back as `ToolCall`s for
 * Signalyard to run.
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
 * - **abort**: `request.abortSignal` is passed to the AI SDK (which cancels the provider
 *   request); `generate` rejects with `AbortedError` (`ABORTED`, the abort reason as `cause`) as
 *   soon as it fires — before the call (no provider call is made) or during it, even if the
 *   provider ignores the signal.
 *
 * @throws ConfigError `CONFIG_INVALID` (at once) when `model` is neither a language model nor a
 * non-empty model id, or an option is unknown or out of range — listing every problem.
 * `generate` rejects with {@link ModelRequestError} (`MODEL_REQUEST_INVALID`) for a request that
 * cannot be mapped (no messages, a malformed message or tool spec, a `tool` message answering an
 * unknown call id, a tool call left unanswered), with {@link ModelCallError}
 * (`MODEL_CALL_FAILED`, the original error as `cause`) when the provider or the AI SDK fails,
 * and with `AbortedError` (`ABORTED`) when aborted.
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
 * ```
 */
export function aiSdkModel(model: LanguageModel, opts?: AiSdkModelOptions): ChatModel {
  const { settings, label } = resolveAiSdkModelOptions(model, opts);

  async function generate(request: ChatRequest): Promise<ChatResponse> {
    const r: unknown = request;
    if (typeof r !== 'object' || r === null) {
      throw new ModelRequestError({
        path: '',
        problem: `expected a ChatRequest ({ messages, tools?, abortSignal? }), got ${describeValue(r)}`,
      });
    }
    const abortSignal: unknown = (r as { abortSignal?: unknown }).abortSignal;
    if (abortSignal !== undefined && !isAbortSignal(abortSignal)) {
      throw new ModelRequestError({
        path: 'abortSignal',
        problem: `expected an AbortSignal, got ${describeValue(abortSignal)}`,
      });
    }
    if (abortSignal?.aborted === true) throw new AbortedError({ cause: abortSignal.reason });
    const messages = toModelMessages((r as { messages?: unknown }).messages);
    const tools = toAiSdkTools((r as { tools?: unknown }).tools);

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
      // Checked again: the signal may have fired while the call was in flight.
      if (abortSignal !== undefined && isAborted(abortSignal)) {
        throw AbortedError.isInstance(error) ? error : new AbortedError({ cause: abortSignal.reason });
      }
      const statusCode = statusCodeOf(error);
      throw new ModelCallError(
        statusCode === undefined ? { model: label, cause: error } : { model: label, cause: error, statusCode },
      );
    }

    const response: ChatResponse = { content: result.text };
    let toolCalls: ToolCall[] | undefined;
    for (const call of result.toolCalls) {
      // A call the provider ran itself (a provider-defined tool) is not Signalyard's to run.
      if ((call as { providerExecuted?: boolean }).providerExecuted === true) continue;
      (toolCalls ??= []).push({ id: call.toolCallId, name: call.toolName, arguments: call.input });
    }
    if (toolCalls !== undefined) response.toolCalls = toolCalls;
    const { inputTokens, outputTokens } = result.usage;
    if (inputTokens !== undefined || outputTokens !== undefined) {
      response.usage = {
        ...(inputTokens === undefined ? {} : { inputTokens }),
        ...(outputTokens === undefined ? {} : { outputTokens }),
      };
    }
    return response;
  }

  return Object.freeze({ generate });
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { aborted?: unknown }).aborted === 'boolean' &&
    typeof (value as { addEventListener?: unknown }).addEventListener === 'function' &&
    typeof (value as { removeEventListener?: unknown }).removeEventListener === 'function'
  );
}

/** Reads `aborted` through a call, so the compiler does not keep a narrowing from before an `await`. */
function isAborted(abortSignal: AbortSignal): boolean {
  return abortSignal.aborted;
}

/** The HTTP status of an AI SDK `APICallError`, also when it is the last error of a `RetryError`. */
function statusCodeOf(error: unknown): number | undefined {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 3; depth++) {
    const { statusCode, lastError } = e as { statusCode?: unknown; lastError?: unknown };
    if (typeof statusCode === 'number') return statusCode;
    e = lastError;
  }
  return undefined;
}

/**
 * Settles like `promise`, or rejects with `AbortedError` as soon as `abortSignal` fires. A
 * promise left behind by an abort has its rejection handled, so a provider that fails late
 * raises no unhandled rejection.
 */
function untilAborted<T>(promise: Promise<T>, abortSignal: AbortSignal | undefined): Promise<T> {
  if (abortSignal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => undefined);
      reject(new AbortedError({ cause: abortSignal.reason }));
    };
    abortSignal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        abortSignal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        abortSignal.removeEventListener('abort', onAbort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes the provider's rejection on unchanged
        reject(error);
      },
    );
  });
}

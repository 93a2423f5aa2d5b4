import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { isAbortSignal, throwIfAborted } from './internal/abort.js';
import { untilAborted } from './internal/abort-race.js';
import { CheckedStream } from './internal/checked-stream.js';
import type { ChatModel, ChatRequest, ChatStreamPart } from './model.js';
import { describeValue } from './signal.js';
import { checkResponse } from './stream-check.js';

/**
 * Reads one model reply as a stream of {@link ChatStreamPart}s: the model's own `stream` when it
 * has one, else its `generate` reply as one `text-delta` (when the content is not empty), one
 * `tool-call` part per call, then `finish`.
 *
 * The parts are checked as they arrive, so a reader can trust them: the `text-delta`s
 * concatenate to `finish.response.content`, the `tool-call` parts equal
 * `finish.response.toolCalls` (same ids, names and arguments, same order), and exactly one
 * `finish` comes last (it is yielded once the model's stream has ended, so nothing followed it).
 * A stream that breaks a rule — a malformed part, a mismatch, a part after `finish`, an end
 * without `finish` — rejects the pending `next()` with {@link ModelStreamError}
 * (`MODEL_STREAM_INVALID`), after the parts already yielded. Empty `text-delta`s are skipped.
 * A model's own error (a rejection of `generate` or of its stream) passes through unchanged.
 *
 * Nothing is called before iteration starts. When `request.abortSignal` fires, the pending
 * `next()` rejects with `AbortedError` (`ABORTED`) at once, whether or not the model honours the
 * signal, and the model's stream is closed (`return()`); so is it when the reader stops early
 * (`break`).
 *
 * @throws InvalidArgumentError `CHAT_MODEL_INVALID` when `model` is not a `ChatModel`, and
 * `CHAT_REQUEST_INVALID` when `request` is not a `ChatRequest` (thrown by the call itself).
 *
 * @example
 * ```ts
 * for await (const part of streamChat(model, { messages, abortSignal })) {
 *   if (part.type === 'text-delta') process.stdout.write(part.delta);
 *   else if (part.type === 'finish') console.log(part.response.toolCalls ?? []);
 * }
 * ```
 */
export function streamChat(model: ChatModel, request: ChatRequest): AsyncIterable<ChatStreamPart> {
  checkModel(model);
  checkRequest(request);
  return model.stream === undefined ? fromGenerate(model, request) : fromStream(model, request);
}

/** Throws `CHAT_MODEL_INVALID` unless `model` is a `ChatModel` (the check of `streamChat`). @internal */
export function checkModel(model: unknown): asserts model is ChatModel {
  const problem =
    typeof model !== 'object' || model === null
      ? 'expected an object with a generate() method'
      : typeof (model as { generate?: unknown }).generate !== 'function'
        ? 'its generate is not a function'
        : (model as { stream?: unknown }).stream !== undefined &&
            typeof (model as { stream?: unknown }).stream !== 'function'
          ? 'its stream is neither a function nor undefined'
          : undefined;
  if (problem === undefined) return;
  throw new InvalidArgumentError({
    code: 'CHAT_MODEL_INVALID',
    message: `Invalid model ${describeValue(model)} for streamChat: ${problem} (a ChatModel { generate, stream? })`,
  });
}

/** Throws `CHAT_REQUEST_INVALID` unless `request` is a `ChatRequest` (the check of `streamChat`). @internal */
export function checkRequest(request: unknown): asserts request is ChatRequest {
  const problem = requestProblem(request);
  if (problem === undefined) return;
  throw new InvalidArgumentError({
    code: 'CHAT_REQUEST_INVALID',
    message: `Invalid request ${describeValue(request)} for streamChat: ${problem}`,
  });
}

function requestProblem(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null)
    return 'expected a ChatRequest { messages, tools?, abortSignal?, agentId? }';
  const r = request as Partial<Record<keyof ChatRequest, unknown>>;
  if (!Array.isArray(r.messages)) return `its messages ${describeValue(r.messages)} are not an array of ChatMessages`;
  if (r.tools !== undefined && !Array.isArray(r.tools))
    return `its tools ${describeValue(r.tools)} are not an array of ToolSpecs`;
  if (r.abortSignal !== undefined && !isAbortSignal(r.abortSignal))
    return `its abortSignal ${describeValue(r.abortSignal)} is not an AbortSignal`;
  if (r.agentId !== undefined && typeof r.agentId !== 'string')
    return `its agentId ${describeValue(r.agentId)} is not a string`;
  return undefined;
}

/** A model without `stream`: its `generate` reply, as parts. */
async function* fromGenerate(model: ChatModel, request: ChatRequest): AsyncGenerator<ChatStreamPart, void, undefined> {
  const abortSignal = request.abortSignal;
  throwIfAborted(abortSignal);
  const reply: unknown = await untilAborted(model.generate(request), abortSignal);
  const response = checkResponse(reply, request.agentId, 'model.generate() resolved');
  if (response.content !== '') {
    yield { type: 'text-delta', delta: response.content };
    throwIfAborted(abortSignal);
  }
  for (const call of response.toolCalls ?? []) {
    yield { type: 'tool-call', call };
    throwIfAborted(abortSignal);
  }
  yield { type: 'finish', response };
}

/** A model with `stream`: its parts, checked, the reading raced against the abort signal. */
function fromStream(model: ChatModel, request: ChatRequest): AsyncGenerator<ChatStreamPart, void, undefined> {
  return new CheckedStream(model, request);
}

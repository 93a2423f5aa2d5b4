import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { abortedError, isAbortSignal, throwIfAborted, untilAborted } from './internal/abort.js';
import type { ChatModel, ChatRequest, ChatStreamPart } from './model.js';
import { describeValue } from './signal.js';
import { StreamCheck, checkResponse, streamInvalid } from './stream-check.js';

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

function checkModel(model: unknown): asserts model is ChatModel {
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

function checkRequest(request: unknown): asserts request is ChatRequest {
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
async function* fromStream(model: ChatModel, request: ChatRequest): AsyncGenerator<ChatStreamPart, void, undefined> {
  const abortSignal = request.abortSignal;
  throwIfAborted(abortSignal);
  const iterator = openStream(model, request);
  const check = new StreamCheck(request.agentId);
  const reader = new AbortableReader(iterator, abortSignal);
  // Whether the model's iterator must be closed when this generator stops: not once it is done
  // or has thrown (as `for await` does).
  let open = true;
  try {
    for (;;) {
      let result: IteratorResult<unknown>;
      try {
        result = await reader.next();
      } catch (error) {
        if (!abortSignal?.aborted) open = false;
        throw error;
      }
      if (typeof result !== 'object' || (result as unknown) === null) {
        throw streamInvalid(
          request.agentId,
          `its iterator's next() resolved ${describeValue(result)}: expected { done, value }`,
        );
      }
      if (result.done === true) {
        open = false;
        yield check.end();
        return;
      }
      const part = check.accept(result.value);
      if (part !== undefined) {
        yield part;
        throwIfAborted(abortSignal);
      }
    }
  } finally {
    reader.stop();
    if (open) close(iterator);
  }
}

/**
 * Reads a model's iterator with each `next()` raced against the abort signal, through one abort
 * listener for the whole stream (a listener per part would cost more than the part): when the
 * signal fires, the pending read rejects with `AbortedError` at once, whether or not the model
 * honours it (its late settlement is then ignored, never unhandled).
 */
class AbortableReader {
  readonly #iterator: AsyncIterator<unknown>;
  readonly #abortSignal: AbortSignal | undefined;
  /** Rejects the pending read; `undefined` between reads. */
  #reject: ((error: unknown) => void) | undefined = undefined;
  readonly #onAbort = (): void => {
    const reject = this.#reject;
    this.#reject = undefined;
    if (reject !== undefined) reject(abortedError(this.#abortSignal as AbortSignal));
  };

  constructor(iterator: AsyncIterator<unknown>, abortSignal: AbortSignal | undefined) {
    this.#iterator = iterator;
    this.#abortSignal = abortSignal;
    abortSignal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** The iterator's next result, or a rejection with `AbortedError` as soon as the signal fires. */
  next(): Promise<IteratorResult<unknown>> {
    const abortSignal = this.#abortSignal;
    if (abortSignal?.aborted === true) return Promise.reject(abortedError(abortSignal));
    return new Promise<IteratorResult<unknown>>((resolve, reject) => {
      this.#reject = reject;
      const settled = (): void => {
        if (this.#reject === reject) this.#reject = undefined;
      };
      // A sync throw of next() rejects this promise (the executor catches it), like a rejection.
      Promise.resolve(this.#iterator.next()).then(
        (result) => {
          settled();
          resolve(result);
        },
        (error: unknown) => {
          settled();
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the model's own rejection, unchanged
          reject(error);
        },
      );
    });
  }

  /** Stops listening to the signal (the stream is over). */
  stop(): void {
    this.#reject = undefined;
    this.#abortSignal?.removeEventListener('abort', this.#onAbort);
  }
}

function openStream(model: ChatModel, request: ChatRequest): AsyncIterator<unknown> {
  const iterable: unknown = (model.stream as NonNullable<ChatModel['stream']>)(request);
  const open =
    typeof iterable === 'object' && iterable !== null
      ? (iterable as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator]
      : undefined;
  if (typeof open !== 'function') {
    throw streamInvalid(
      request.agentId,
      `model.stream() returned ${describeValue(iterable)}: expected an AsyncIterable`,
    );
  }
  const iterator: unknown = (open as () => unknown).call(iterable);
  if (
    typeof iterator !== 'object' ||
    iterator === null ||
    typeof (iterator as { next?: unknown }).next !== 'function'
  ) {
    throw streamInvalid(
      request.agentId,
      `model.stream() returned an iterable whose iterator ${describeValue(iterator)} has no next()`,
    );
  }
  return iterator as AsyncIterator<unknown>;
}

/** Closes the model's stream without waiting: its `return()` may never settle (a model that ignores the abort). */
function close(iterator: AsyncIterator<unknown>): void {
  try {
    const closing = iterator.return?.();
    if (closing !== undefined) Promise.resolve(closing).catch(ignore);
  } catch {
    // a stream that cannot close is abandoned
  }
}

function ignore(): void {
  // the outcome of an abandoned stream's return() no longer matters
}

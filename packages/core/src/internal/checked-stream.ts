import type { ChatModel, ChatRequest, ChatStreamPart } from '../model.js';
import { describeValue } from '../signal.js';
import { StreamCheck, streamInvalid } from '../stream-check.js';
import { abortedError, onAbort, throwIfAborted } from './abort.js';
import type { AbortRace } from './abort-race.js';

const INITIAL = 0;
/** A part was yielded; the next `next()` reads on. */
const SUSPENDED = 1;
/** The `finish` part was yielded; the next `next()` ends the stream. */
const FINISHED = 2;
const DONE = 3;

/** A call waiting for the one before it to settle (calls are served in order, as an async generator's). */
type Call = () => Promise<IteratorResult<ChatStreamPart, void>>;

/**
 * A model's stream read through `streamChat`: its parts checked ({@link StreamCheck}), each read
 * raced against the abort signal through one listener for the whole stream. It behaves as the
 * async generator it replaces (nothing called before the first `next()`; the model's stream
 * closed with `return()` when the reader stops early, fails or is aborted, not once it ended or
 * threw; calls served in order) with one promise per part: the reader's, settled from the
 * model's own `next()` promise. When the signal fires, the pending read rejects with
 * `AbortedError` at once, whether or not the model honours it (its late settlement is then
 * ignored, never unhandled).
 *
 * {@link CheckedStream.readAll} reads it whole instead, handing each part to a callback as it is
 * accepted (one promise hop per part: the model's own), with the same checks, abort and closing.
 * With `race` (an {@link AbortRace} on the request's signal, as a run keeps one for all its
 * calls) it listens through the race instead of adding a listener of its own to the signal.
 * @internal
 */
export class CheckedStream implements AsyncGenerator<ChatStreamPart, void, undefined> {
  #model: ChatModel | undefined;
  #request: ChatRequest;
  readonly #abortSignal: AbortSignal | undefined;
  #state: typeof INITIAL | typeof SUSPENDED | typeof FINISHED | typeof DONE = INITIAL;
  #iterator: AsyncIterator<unknown> | undefined = undefined;
  #check: StreamCheck | undefined = undefined;
  /** Whether the model's iterator must be closed when this stream stops: not once it is done or has thrown. */
  #open = false;
  /** Whether a read of the model's iterator is pending (its settlement is then awaited). */
  #reading = false;
  #resolve: ((result: IteratorResult<ChatStreamPart, void>) => void) | undefined = undefined;
  #reject: ((error: unknown) => void) | undefined = undefined;
  /** Whether a call is in progress, and how many wait behind it (chained on `#tail`). */
  #busy = false;
  #queued = 0;
  #tail: Promise<unknown> = Promise.resolve();
  /** Stops listening to the abort signal (set while the model's stream is open). */
  #unlisten: (() => void) | undefined = undefined;
  readonly #race: AbortRace | undefined;
  /** `readAll`'s callback: each accepted part goes to it (no `next()` calls then). */
  #onPart: ((part: ChatStreamPart) => void) | undefined = undefined;

  readonly #onAbort = (): void => {
    if (!this.#reading) return;
    this.#fail(abortedError(this.#abortSignal as AbortSignal));
  };
  readonly #onResult = (result: IteratorResult<unknown>): void => {
    if (!this.#reading) return; // aborted meanwhile
    this.#reading = false;
    this.#accept(result);
  };
  readonly #onError = (error: unknown): void => {
    if (!this.#reading) return;
    this.#reading = false;
    if (this.#abortSignal?.aborted !== true) this.#open = false;
    this.#fail(error);
  };
  readonly #readNext = (
    resolve: (result: IteratorResult<ChatStreamPart, void>) => void,
    reject: (error: unknown) => void,
  ): void => {
    this.#resolve = resolve;
    this.#reject = reject;
    this.#read();
  };

  constructor(model: ChatModel, request: ChatRequest, race?: AbortRace) {
    this.#model = model;
    this.#request = request;
    this.#abortSignal = request.abortSignal;
    this.#race = race;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ChatStreamPart, void>> {
    return this.#call(this.#next);
  }

  return(value?: unknown): Promise<IteratorResult<ChatStreamPart, void>> {
    return this.#call(() => {
      this.#stop();
      return Promise.resolve({ value: value as undefined, done: true });
    });
  }

  throw(error?: unknown): Promise<IteratorResult<ChatStreamPart, void>> {
    return this.#call(() => {
      this.#stop();
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown value passes through unchanged
      return Promise.reject(error);
    });
  }

  /**
   * Reads the whole stream (call it instead of `next()`, on a stream not yet read): each part,
   * checked, goes to `onPart` as soon as it is accepted, `finish` last; resolves after `finish`
   * was handed over. Rejects as `next()` would (the model's error, `MODEL_STREAM_INVALID`,
   * `ABORTED` at once when the signal fires) and with what `onPart` throws, closing the
   * model's stream (`return()`) as a reader that stops early does.
   */
  readAll(onPart: (part: ChatStreamPart) => void): Promise<void> {
    if (this.#state !== INITIAL || this.#busy) {
      return Promise.reject(new Error('CheckedStream.readAll: the stream is already being read'));
    }
    try {
      this.#begin();
    } catch (error) {
      this.#stop();
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown value passes through unchanged
      return Promise.reject(error);
    }
    this.#onPart = onPart;
    this.#busy = true;
    return new Promise<IteratorResult<ChatStreamPart, void>>(this.#readNext).then(ignore);
  }

  #call(call: Call): Promise<IteratorResult<ChatStreamPart, void>> {
    if (!this.#busy && this.#queued === 0) return this.#run(call);
    this.#queued++;
    const run = (): Promise<IteratorResult<ChatStreamPart, void>> => {
      this.#queued--;
      return this.#run(call);
    };
    const result = this.#tail.then(run, run);
    this.#tail = result;
    return result;
  }

  #run(call: Call): Promise<IteratorResult<ChatStreamPart, void>> {
    const result = call();
    if (this.#busy) this.#tail = result;
    return result;
  }

  readonly #next = (): Promise<IteratorResult<ChatStreamPart, void>> => {
    const state = this.#state;
    if (state === DONE) return Promise.resolve({ value: undefined, done: true });
    if (state === FINISHED) {
      this.#stop();
      return Promise.resolve({ value: undefined, done: true });
    }
    if (state === INITIAL) {
      try {
        this.#begin();
      } catch (error) {
        this.#stop();
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown value passes through unchanged
        return Promise.reject(error);
      }
    }
    // After a part, an abort that came meanwhile rejects this call: `#read` checks the signal.
    this.#busy = true;
    return new Promise(this.#readNext);
  };

  /** Opens the model's stream (the first `next()`). */
  #begin(): void {
    const request = this.#request;
    const model = this.#model as ChatModel;
    this.#model = undefined;
    this.#state = DONE; // until opened
    throwIfAborted(this.#abortSignal);
    this.#iterator = openStream(model, request);
    this.#check = new StreamCheck(request.agentId);
    this.#open = true;
    this.#state = SUSPENDED;
    const abortSignal = this.#abortSignal;
    if (abortSignal === undefined) return;
    const race = this.#race;
    this.#unlisten = race === undefined ? onAbort(abortSignal, this.#onAbort) : race.watch(this.#onAbort);
  }

  /** Reads the model's next part (the pending `next()` settles with a part or an error). */
  #read(): void {
    const abortSignal = this.#abortSignal;
    if (abortSignal?.aborted === true) {
      this.#fail(abortedError(abortSignal));
      return;
    }
    this.#reading = true;
    let pending: unknown;
    try {
      pending = (this.#iterator as AsyncIterator<unknown>).next();
    } catch (error) {
      // A sync throw of next() is a rejection (unless the abort already settled the read).
      this.#onError(error);
      return;
    }
    Promise.resolve(pending as IteratorResult<unknown>).then(this.#onResult, this.#onError);
  }

  #accept(result: IteratorResult<unknown>): void {
    if (typeof result !== 'object' || (result as unknown) === null) {
      this.#fail(
        streamInvalid(
          this.#request.agentId,
          `its iterator's next() resolved ${describeValue(result)}: expected { done, value }`,
        ),
      );
      return;
    }
    const check = this.#check as StreamCheck;
    let part: ChatStreamPart | undefined;
    try {
      if (result.done === true) {
        this.#open = false;
        part = check.end();
        this.#state = FINISHED;
      } else {
        part = check.accept(result.value);
      }
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (part === undefined) {
      this.#read(); // an empty delta, or the held finish: read on
      return;
    }
    if (this.#onPart !== undefined) {
      this.#handOver(this.#onPart, part);
      return;
    }
    const resolve = this.#resolve as (result: IteratorResult<ChatStreamPart, void>) => void;
    this.#settle();
    resolve({ value: part, done: false });
  }

  /** `readAll`: `part` to `onPart`, then the next read, or — after `finish` — the end. */
  #handOver(onPart: (part: ChatStreamPart) => void, part: ChatStreamPart): void {
    try {
      onPart(part);
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (this.#state !== FINISHED) {
      // After a part, an abort that came meanwhile (also from `onPart`) fails the read.
      this.#read();
      return;
    }
    const resolve = this.#resolve as (result: IteratorResult<ChatStreamPart, void>) => void;
    this.#stop();
    this.#settle();
    resolve({ value: undefined, done: true });
  }

  /** Ends the stream and rejects the pending `next()` with `error` (after closing the model's stream). */
  #fail(error: unknown): void {
    const reject = this.#reject as (error: unknown) => void;
    this.#stop();
    this.#settle();
    reject(error);
  }

  #settle(): void {
    this.#resolve = undefined;
    this.#reject = undefined;
    this.#busy = false;
  }

  /** The stream is over: no more listening to the signal; the model's stream closed when still open. */
  #stop(): void {
    this.#state = DONE;
    this.#reading = false;
    this.#model = undefined;
    this.#check = undefined;
    this.#onPart = undefined;
    this.#unlisten?.();
    this.#unlisten = undefined;
    if (this.#open) {
      this.#open = false;
      close(this.#iterator as AsyncIterator<unknown>);
    }
    this.#iterator = undefined;
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

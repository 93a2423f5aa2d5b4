import { AbortedError } from '../errors/aborted-error.js';

/**
 * Turns a push-based producer into an `AsyncIterable`. `start` runs on the first `next()` (so
 * its synchronous errors surface there), pushes events through `emit` and settles when done;
 * events are buffered until read, then released (the buffer never holds read events). A
 * rejection of `start` is thrown to the reader after the events emitted before it. When the
 * reader stops early (`break`, `return()`), the `AbortSignal` given to `start` fires so the
 * producer stops too. `controller`: the one to abort then (its signal is the one `start` gets),
 * for a producer that has a controller of its own anyway; default a new one.
 *
 * Behaves as an async generator would (calls are served in order; a `return()` or `throw()`
 * made while a `next()` waits takes effect after it), without one: an event meets a waiting
 * reader directly, and a buffered one is returned as an already-resolved result.
 */
export function pushStream<T>(
  start: (emit: (event: T) => void, abortSignal: AbortSignal) => Promise<unknown>,
  stoppedMessage = 'The stream consumer stopped reading',
  controller?: AbortController,
): AsyncGenerator<T, void, undefined> {
  return new PushStream(start, stoppedMessage, controller);
}

/** A call waiting for its turn: a `next()` waiting for an event, or any call queued behind one. */
interface Waiting<T> {
  readonly op: 'next' | 'return' | 'throw';
  readonly value: unknown;
  readonly resolve: (result: IteratorResult<T, void>) => void;
  readonly reject: (error: unknown) => void;
}

const INITIAL = 0;
const RUNNING = 1;
const DONE = 2;

class PushStream<T> implements AsyncGenerator<T, void, undefined> {
  #start: ((emit: (event: T) => void, abortSignal: AbortSignal) => Promise<unknown>) | undefined;
  readonly #stoppedMessage: string;
  #state: typeof INITIAL | typeof RUNNING | typeof DONE = INITIAL;
  #queue: (T | undefined)[] = [];
  #head = 0;
  /** Whether `start` has settled; `failure` holds its rejection. */
  #finished = false;
  #failure: { error: unknown } | undefined = undefined;
  readonly #waiting: Waiting<T>[] = [];
  #controller: AbortController | undefined = undefined;
  readonly #emit = (event: T): void => {
    if (this.#state === DONE) return; // the reader stopped: nobody reads it
    const waiting = this.#waiting;
    if (waiting.length === 0) {
      this.#queue.push(event);
      return;
    }
    (waiting.shift() as Waiting<T>).resolve({ value: event, done: false });
    this.#drain();
  };

  constructor(
    start: (emit: (event: T) => void, abortSignal: AbortSignal) => Promise<unknown>,
    stoppedMessage: string,
    controller: AbortController | undefined,
  ) {
    this.#start = start;
    this.#stoppedMessage = stoppedMessage;
    this.#controller = controller;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, void>> {
    return this.#call('next', undefined);
  }

  return(value?: unknown): Promise<IteratorResult<T, void>> {
    return this.#call('return', value);
  }

  throw(error?: unknown): Promise<IteratorResult<T, void>> {
    return this.#call('throw', error);
  }

  #call(op: Waiting<T>['op'], value: unknown): Promise<IteratorResult<T, void>> {
    if (this.#waiting.length === 0) {
      const result = this.#serve(op, value);
      if (result !== undefined) return result;
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push({ op, value, resolve, reject });
    });
  }

  /** Serves a call now: its settled result, or `undefined` when a `next()` must wait for an event. */
  #serve(op: Waiting<T>['op'], value: unknown): Promise<IteratorResult<T, void>> | undefined {
    if (op !== 'next') {
      this.#stop();
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown value passes through unchanged
      return op === 'return' ? Promise.resolve({ value: value as undefined, done: true }) : Promise.reject(value);
    }
    if (this.#state === INITIAL) this.#begin();
    if (this.#head < this.#queue.length) return Promise.resolve({ value: this.#take(), done: false });
    if (this.#state === DONE) return Promise.resolve({ value: undefined, done: true });
    if (!this.#finished) return undefined;
    this.#state = DONE;
    const failure = this.#failure;
    this.#failure = undefined;
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown value passes through unchanged
    return failure === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(failure.error);
  }

  /** Serves the waiting calls, in order, until a `next()` must wait again. */
  #drain(): void {
    const waiting = this.#waiting;
    while (waiting.length > 0) {
      const w = waiting[0] as Waiting<T>;
      const result = this.#serve(w.op, w.value);
      if (result === undefined) return;
      waiting.shift();
      result.then(w.resolve, w.reject);
    }
  }

  #begin(): void {
    this.#state = RUNNING;
    const start = this.#start as (emit: (event: T) => void, abortSignal: AbortSignal) => Promise<unknown>;
    this.#start = undefined;
    const controller = this.#controller ?? new AbortController();
    this.#controller = controller;
    // async: a synchronous throw from `start` becomes a rejection, reported like any other failure
    const started = (async () => start(this.#emit, controller.signal))();
    started.then(
      () => {
        this.#settled(undefined);
      },
      (error: unknown) => {
        this.#settled({ error });
      },
    );
  }

  #settled(failure: { error: unknown } | undefined): void {
    this.#finished = true;
    if (this.#state === DONE) return;
    this.#failure = failure;
    this.#drain();
  }

  #take(): T {
    const queue = this.#queue;
    const event = queue[this.#head] as T;
    queue[this.#head++] = undefined;
    if (this.#head === queue.length) {
      this.#queue = [];
      this.#head = 0;
    }
    return event;
  }

  /** The reader stopped (or the stream ended): the producer, still running, is told to stop. */
  #stop(): void {
    const wasRunning = this.#state === RUNNING;
    this.#state = DONE;
    this.#start = undefined;
    this.#queue = [];
    this.#head = 0;
    if (wasRunning && !this.#finished) {
      (this.#controller as AbortController).abort(new AbortedError({ message: this.#stoppedMessage }));
    }
  }
}

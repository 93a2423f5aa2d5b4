import { onAbort } from './abort.js';

/** Options of an {@link EventChannel}. */
export interface EventChannelOptions<E> {
  /**
   * Called when a listener throws: the one policy for a throwing listener is to report it here
   * and go on (the other listeners still get the event; `emit` never throws). Without it, the
   * error is dropped. It is never called for an error thrown while reporting.
   */
  readonly onListenerError?: (error: unknown, event: E) => void;
}

/**
 * A synchronous, ordered event channel: `on(listener)` to subscribe (returns an unsubscribe
 * function), `emit(event)` to deliver an event to every listener in subscription order, and
 * `events()` for a buffered `AsyncIterable` over what is emitted from then on. `end()` ends every
 * open iterable (after what it had buffered). `hasListeners` lets a hot path skip building an
 * event nobody reads. A listener that subscribes or unsubscribes during `emit` takes effect from
 * the next event.
 */
export class EventChannel<E> {
  #listeners: readonly ((event: E) => void)[] = [];
  readonly #closers = new Set<() => void>();
  #ended = false;
  #reporting = false;
  readonly #onListenerError: ((error: unknown, event: E) => void) | undefined;

  constructor(options: EventChannelOptions<E> = {}) {
    this.#onListenerError = options.onListenerError;
  }

  /** Subscribes `listener`; the returned function unsubscribes it (idempotent). */
  on(listener: (event: E) => void): () => void {
    this.#listeners = [...this.#listeners, listener];
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  /** True when anything listens (an `events()` iterable counts). */
  get hasListeners(): boolean {
    return this.#listeners.length > 0;
  }

  /** True once {@link end} was called. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Delivers `event` to every listener, in order; a throwing listener is reported, never rethrown. */
  emit(event: E): void {
    const listeners = this.#listeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        (listeners[i] as (event: E) => void)(event);
      } catch (error) {
        this.#report(error, event);
      }
    }
  }

  #report(error: unknown, event: E): void {
    if (this.#reporting || this.#onListenerError === undefined) return;
    this.#reporting = true;
    try {
      this.#onListenerError(error, event);
    } catch {
      // a failing reporter must not break the emitter either
    } finally {
      this.#reporting = false;
    }
  }

  /**
   * A buffered async iterable over the events emitted from now on; it ends when `abortSignal`
   * fires, when the channel ends (after the events already buffered), or when the reader stops.
   */
  events(abortSignal?: AbortSignal): AsyncIterable<E> {
    const buffer: E[] = [];
    let head = 0;
    let wake: (() => void) | undefined;
    let done = false;
    let unlisten: (() => void) | undefined;
    const finish = (): void => {
      if (done) return;
      done = true;
      unsubscribe();
      this.#closers.delete(finish);
      unlisten?.();
      wake?.();
    };
    const unsubscribe = this.on((event) => {
      buffer.push(event);
      wake?.();
    });
    this.#closers.add(finish);
    if (this.#ended || abortSignal?.aborted === true) finish();
    else if (abortSignal !== undefined) unlisten = onAbort(abortSignal, finish);
    const next = async (): Promise<IteratorResult<E>> => {
      while (head === buffer.length && !done) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (head < buffer.length) {
        const event = buffer[head++] as E;
        if (head === buffer.length) {
          buffer.length = 0;
          head = 0;
        }
        return { value: event, done: false };
      }
      return { value: undefined, done: true };
    };
    return {
      [Symbol.asyncIterator]: () => ({
        next,
        return: (): Promise<IteratorResult<E>> => {
          finish();
          buffer.length = 0;
          head = 0;
          return Promise.resolve({ value: undefined, done: true });
        },
      }),
    };
  }

  /** Ends every open `events()` iterable (after the events already buffered); later ones end at once. */
  end(): void {
    this.#ended = true;
    for (const finish of [...this.#closers]) finish();
  }
}

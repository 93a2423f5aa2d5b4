import type { RunnerEvent } from '@signalyard/core';

type Listener = (event: RunnerEvent) => void;

/**
 * The runner's one inspection channel. Events are delivered synchronously, in order, to every
 * listener; a listener that throws is reported as a `warning` event (never recursively) and
 * never breaks dispatch.
 */
export class EventHub {
  #listeners: readonly Listener[] = [];
  readonly #closers = new Set<() => void>();
  #ended = false;

  on(listener: Listener): () => void {
    this.#listeners = [...this.#listeners, listener];
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  get hasListeners(): boolean {
    return this.#listeners.length > 0;
  }

  emit(event: RunnerEvent): void {
    const listeners = this.#listeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        (listeners[i] as Listener)(event);
      } catch (error) {
        if (event.type === 'warning') continue; // never report a warning about a warning
        this.emit({
          type: 'warning',
          message: `A runner event listener threw on "${event.type}": ${error instanceof Error ? error.message : String(error)}`,
          cause: error,
        });
      }
    }
  }

  /** A buffered async iterable over events; ends on `abortSignal` or `end()`. */
  events(abortSignal?: AbortSignal): AsyncIterable<RunnerEvent> {
    const buffer: RunnerEvent[] = [];
    let wake: (() => void) | undefined;
    let done = false;
    const finish = (): void => {
      done = true;
      unsubscribe();
      this.#closers.delete(finish);
      abortSignal?.removeEventListener('abort', finish);
      wake?.();
    };
    const unsubscribe = this.on((event) => {
      buffer.push(event);
      wake?.();
    });
    this.#closers.add(finish);
    if (this.#ended || abortSignal?.aborted === true) finish();
    else abortSignal?.addEventListener('abort', finish, { once: true });
    return {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<RunnerEvent>> => {
          while (buffer.length === 0 && !done) {
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
          }
          const event = buffer.shift();
          if (event !== undefined) return { value: event, done: false };
          return { value: undefined, done: true };
        },
        return: (): Promise<IteratorResult<RunnerEvent>> => {
          finish();
          buffer.length = 0;
          return Promise.resolve({ value: undefined, done: true });
        },
      }),
    };
  }

  /** Ends every open `events()` iterable (after the events already buffered). */
  end(): void {
    this.#ended = true;
    for (const finish of [...this.#closers]) finish();
  }
}

import { EventChannel } from '@signalyard/core/internal';
import type { KernelEvent } from './kernel-event.js';

/**
 * The kernel's events: collected during a kernel operation and delivered, in order, when the
 * outermost operation ends, so listeners always see a consistent kernel and may call any kernel
 * method (events they cause are appended and delivered by the same flush). Nothing is collected
 * while nobody listens.
 * @internal
 */
export class KernelEventBus {
  // A throwing listener is reported as an uncaught exception on a later microtask (as an
  // `EventTarget` listener's is); the other listeners still get the event.
  readonly #channel = new EventChannel<KernelEvent>({
    onListenerError: (error) => {
      queueMicrotask(() => {
        throw error;
      });
    },
  });
  readonly #afterOperation: () => void;
  #pending: KernelEvent[] = [];
  #depth = 0;
  #flushing = false;

  /** @param afterOperation Called when an outermost operation ends, after its events are delivered. */
  constructor(afterOperation: () => void) {
    this.#afterOperation = afterOperation;
  }

  /** Subscribes `listener`; returns an idempotent unsubscribe. */
  on(listener: (event: KernelEvent) => void): () => void {
    return this.#channel.on(listener);
  }

  /** A buffered async iterable over the events delivered from now on; ends when `abortSignal` fires or the reader stops. */
  events(abortSignal: AbortSignal | undefined): AsyncIterable<KernelEvent> {
    return this.#channel.events(abortSignal);
  }

  emit(event: KernelEvent): void {
    if (this.#channel.hasListeners) this.#pending.push(event);
  }

  /** Runs a kernel operation; when the outermost one ends, delivers its events, then calls `afterOperation`. */
  batch(operation: () => void): void {
    this.#depth++;
    try {
      operation();
    } finally {
      this.#depth--;
      if (this.#depth === 0) {
        this.#flush();
        this.#afterOperation();
      }
    }
  }

  #flush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    try {
      const pending = this.#pending;
      for (let i = 0; i < pending.length; i++) this.#channel.emit(pending[i] as KernelEvent);
    } finally {
      this.#pending = [];
      this.#flushing = false;
    }
  }
}

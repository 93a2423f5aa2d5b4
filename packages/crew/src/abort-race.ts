import { abortedError } from '@signalyard/core/internal';

/**
 * Races promises against one `AbortSignal` with a single `abort` listener for all of them: a
 * run makes model call after model call on the same signal, and adding and removing a listener
 * on a Node `AbortSignal` per call costs more than the call itself with a fast model. `race`
 * settles like the promise, or rejects with the signal's `AbortedError` as soon as the signal
 * fires (at once when it already has), whether or not the promise ever settles. `dispose` stops
 * listening (idempotent); call it when the run is over.
 * @internal
 */
export class AbortRace {
  readonly #signal: AbortSignal;
  /** The rejections of the promises being raced. */
  readonly #pending = new Set<(error: unknown) => void>();
  readonly #onAbort = (): void => {
    const error = abortedError(this.#signal);
    for (const reject of this.#pending) reject(error);
    this.#pending.clear();
  };
  #listening: boolean;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    this.#listening = !signal.aborted;
    if (this.#listening) signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  race<T>(value: PromiseLike<T> | T): Promise<T> {
    const signal = this.#signal;
    if (signal.aborted) {
      Promise.resolve(value).then(undefined, ignore);
      return Promise.reject(abortedError(signal));
    }
    const pending = this.#pending;
    return new Promise<T>((resolve, reject) => {
      pending.add(reject);
      Promise.resolve(value).then(
        (v) => {
          pending.delete(reject);
          resolve(v);
        },
        (error: unknown) => {
          pending.delete(reject);
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the model's own rejection, unchanged
          reject(error);
        },
      );
    });
  }

  dispose(): void {
    if (!this.#listening) return;
    this.#listening = false;
    this.#signal.removeEventListener('abort', this.#onAbort);
  }
}

function ignore(): void {
  // the outcome of a call the run no longer waits for does not matter
}

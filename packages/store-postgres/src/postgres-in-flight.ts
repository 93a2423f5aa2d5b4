/**
 * The calls a store or inbox has in flight, so that `close()` ends its pool only after them.
 * @internal
 */
export class InFlightCalls {
  #count = 0;
  #drained: (() => void) | undefined;

  /** Runs `fn`, counted while it runs. */
  async track<T>(fn: () => Promise<T>): Promise<T> {
    this.#count++;
    try {
      return await fn();
    } finally {
      if (--this.#count === 0) this.#drained?.();
    }
  }

  /** Resolves once no call is in flight (at once when none is). */
  drained(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#drained = resolve;
    });
  }
}

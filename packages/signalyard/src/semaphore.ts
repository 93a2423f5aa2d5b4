/** A FIFO counting semaphore: at most `limit` holders at once. */
export class Semaphore {
  #available: number;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#available = limit;
  }

  /** Resolves when a slot is held; the caller must `release()` it exactly once. */
  acquire(): Promise<void> | undefined {
    if (this.#available > 0) {
      this.#available--;
      return undefined; // fast path: no promise
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#available++;
  }
}

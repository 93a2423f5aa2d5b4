/** The resolve function of the promise made last with {@link captureResolve}, read at once. */
let captured: (() => void) | undefined;
/** One executor for every waiter's promise: no closure made per wait. */
const captureResolve = (resolve: () => void): void => {
  captured = resolve;
};

/** A FIFO counting semaphore: at most `limit` holders at once. */
export class Semaphore {
  #available: number;
  /** Waiters from `#head` on; taken slots are cleared (a queue without `shift()` per release). */
  #waiting: ((() => void) | undefined)[] = [];
  #head = 0;

  constructor(limit: number) {
    this.#available = limit;
  }

  /** Resolves when a slot is held; the caller must `release()` it exactly once. */
  acquire(): Promise<void> | undefined {
    if (this.#available > 0) {
      this.#available--;
      return undefined; // fast path: no promise
    }
    const wait = new Promise<void>(captureResolve);
    this.#waiting.push(captured);
    captured = undefined;
    return wait;
  }

  release(): void {
    if (this.#head === this.#waiting.length) {
      this.#available++;
      return;
    }
    const next = this.#waiting[this.#head] as () => void;
    this.#waiting[this.#head++] = undefined;
    if (this.#head === this.#waiting.length) {
      this.#waiting = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting = this.#waiting.slice(this.#head);
      this.#head = 0;
    }
    next();
  }
}

/** One call waiting in a {@link Batcher}. */
interface Waiting<I, O> {
  readonly input: I;
  readonly resolve: (output: O) => void;
  readonly reject: (error: unknown) => void;
}

/** What a {@link Batcher} sends its calls with. @internal */
export interface BatchSender<I, O> {
  /** Runs one call alone (the statement of a single call). */
  readonly one: (input: I) => Promise<O>;
  /** Runs several calls in one statement: their outputs, in their order. */
  readonly many: (inputs: readonly I[]) => Promise<O[]>;
  /** What two calls that must not share a statement have in common (e.g. their receipt id); absent: any calls may. */
  readonly idOf?: (input: I) => string;
}

/** The most calls one batch carries. */
const MAX_BATCH = 200;

/**
 * Runs calls of one kind with at most `maxInFlight` statements in flight, like group commit: a
 * call goes out at once when a statement is free; calls made while none is go out together, in
 * one statement (one round trip, one transaction, one commit), when the next one is. A worker
 * settling many sessions (the inbox's settles and counts) or saving many (the store's saves) thus
 * sends a round trip per round trip's worth of calls, not one per call, and an idle one waits no
 * longer than before. A batch that fails fails each of its calls with the same error (nothing of
 * it was written: one transaction; a sender may answer each call on its own instead, as the
 * store's does for a batch the server refused). Two calls with the same id
 * never share a batch (the later one waits for the next).
 * @internal
 */
export class Batcher<I, O> {
  readonly #send: BatchSender<I, O>;
  readonly #maxInFlight: number;
  #queue: Waiting<I, O>[] = [];
  #inFlight = 0;

  constructor(send: BatchSender<I, O>, maxInFlight: number) {
    this.#send = send;
    this.#maxInFlight = maxInFlight;
  }

  /** Runs `input` alone or with the calls waiting beside it. */
  run(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ input, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#maxInFlight && this.#queue.length > 0) {
      const batch = this.#take();
      this.#inFlight++;
      void this.#run(batch).finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  /** The next batch: the waiting calls in order, up to {@link MAX_BATCH}, one per id (the others stay, in order). */
  #take(): Waiting<I, O>[] {
    if (this.#queue.length === 1) return this.#queue.splice(0, 1);
    const batch: Waiting<I, O>[] = [];
    const rest: Waiting<I, O>[] = [];
    const ids = new Set<string>();
    const { idOf } = this.#send;
    for (const waiting of this.#queue) {
      const id = idOf?.(waiting.input);
      if (batch.length >= MAX_BATCH || (id !== undefined && ids.has(id))) rest.push(waiting);
      else {
        if (id !== undefined) ids.add(id);
        batch.push(waiting);
      }
    }
    this.#queue = rest;
    return batch;
  }

  async #run(batch: readonly Waiting<I, O>[]): Promise<void> {
    try {
      if (batch.length === 1) {
        const [only] = batch as [Waiting<I, O>];
        only.resolve(await this.#send.one(only.input));
        return;
      }
      const outputs = await this.#send.many(batch.map((w) => w.input));
      batch.forEach((w, i) => {
        w.resolve(outputs[i] as O);
      });
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  }
}

import type { Outcome, TurnEvent } from '@signalyard/core';

/**
 * One signal's turn as a stream: its `routed` decision, the engine's text deltas and events,
 * and exactly one `outcome` event, last. Events are buffered from the start, so iterating is
 * optional and may begin late; breaking out of the iteration does not abort the turn (the
 * call's `abortSignal` does). `outcome` resolves to the same `Outcome` the stream ends with.
 * When the call itself is refused (`RUNNER_CLOSED`, `RUNNER_INPUT_INVALID`), iterating throws
 * that `RunnerError` and `outcome` rejects with it (a rejection nobody needs to handle). The
 * events are yielded once: loops reading one stream at the same time share them (each event goes
 * to one loop), and every such loop ends with the turn.
 *
 * Buffering stops once no reader can read: when the last loop reading the stream breaks out
 * (or returns) before its end, the stream is closed — the events buffered are released, later
 * ones are not kept, and a loop started afterwards ends at once (`outcome` still resolves); a
 * stream never iterated buffers until it is itself unreachable (garbage).
 */
export interface TurnStream extends AsyncIterable<TurnEvent> {
  /** The turn's outcome, as `handle` / `dispatch` would have resolved it. */
  readonly outcome: Promise<Outcome>;
  /**
   * With a durable inbox: the receipt id of the entry whose events this stream reads, once it is
   * known (once accepted, for `stream` / `streamDispatch` / `streamApprove`; at once for
   * `resumeStream({ receiptId })`). `undefined` for a turn applied in process without a durable
   * inbox, for `resumeStream({ sessionKey })`, and for a call refused before acceptance. Never
   * rejects. Pass it to `Runner.resumeStream` with an event's {@link TurnStream.offsetOf}.
   */
  readonly receiptId: Promise<string | undefined>;
  /**
   * The offset of `event` in its receipt's stream log (an opaque string, compared only by the
   * inbox), for an event this stream yielded from a durable inbox: pass it as `from` to
   * `Runner.resumeStream({ receiptId }, { from })` to continue after that event. `undefined` for
   * an event of an in-process turn, and for any other value.
   * @example
   * ```ts
   * const turn = runner.stream(message);
   * for await (const event of turn) send({ id: turn.offsetOf(event), data: event }); // an SSE id
   * ```
   */
  offsetOf(event: TurnEvent): string | undefined;
}

/**
 * Where a streamed turn's events go, with the event's offset in its receipt's stream log when it
 * was read from a durable inbox.
 * @internal
 */
export type TurnSink = (event: TurnEvent, offset?: string) => void;

/** What a streamed turn's runner side may do besides feeding events. @internal */
export interface TurnStreamControl {
  /** Makes the stream's `receiptId` resolve with `receiptId` (the first call wins). */
  readonly setReceipt: (receiptId: string) => void;
  /** Fires once no reader can read the stream any more (its last loop broke out early). */
  readonly closed: AbortSignal;
}

/**
 * Thrown by a stream's `run` to end the iteration without an error while `outcome` rejects with
 * `error` (`resumeStream` with nothing to read). @internal
 */
export class QuietEnd extends Error {
  constructor(readonly error: unknown) {
    super('the stream ended without an outcome');
  }
}

/** The control of each stream's sink, for code that gets only the sink (a durable inbox's relay). */
const CONTROLS = new WeakMap<TurnSink, TurnStreamControl>();

/** The control of a {@link turnStream}'s sink (`undefined` for any other sink). @internal */
export function sinkControl(sink: TurnSink): TurnStreamControl | undefined {
  return CONTROLS.get(sink);
}

/** The key of a stream's buffer (not part of `TurnStream`): tests count what it holds. */
const TURN_STREAM_BUFFER: unique symbol = Symbol.for('signalyard.turnStream.buffer');

/** The events of one stream not read yet, and its readers. */
class TurnStreamBuffer {
  #events: (TurnEvent | undefined)[] = [];
  #head = 0;
  /** Every reader waiting for the next event (two loops may read one stream at once: each must wake). */
  readonly #waiting: (() => void)[] = [];
  /** Loops reading now (started, not ended). */
  #readers = 0;
  done = false;
  failure: { error: unknown } | undefined = undefined;
  /** No reader can read any more: nothing is kept. */
  closed = false;
  /** How the runner's side reaches this buffer: strongly while a loop reads, else weakly. */
  readonly #holder: BufferHolder;
  /** The offsets of the events yielded from a durable inbox's stream log. */
  readonly offsets = new WeakMap<TurnEvent, string>();

  constructor(holder: BufferHolder) {
    this.#holder = holder;
    holder.weak = new WeakRef(this);
  }

  /** The events buffered and not read yet. */
  get size(): number {
    return this.#events.length - this.#head;
  }

  push(event: TurnEvent, offset: string | undefined): void {
    if (this.closed) return;
    if (offset !== undefined) this.offsets.set(event, offset);
    this.#events.push(event);
    this.#notify();
  }

  finish(failure: { error: unknown } | undefined): void {
    this.done = true;
    this.failure = failure;
    this.#notify();
  }

  /** The next unread event, released from the buffer; `undefined` when none is buffered. */
  take(): TurnEvent | undefined {
    if (this.#head === this.#events.length) return undefined;
    const event = this.#events[this.#head] as TurnEvent;
    this.#events[this.#head++] = undefined;
    if (this.#head === this.#events.length) {
      this.#events = [];
      this.#head = 0;
    }
    return event;
  }

  /** Resolves at the next event, the end, or the close. */
  wait(): Promise<void> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  enter(): void {
    if (this.#readers++ === 0) this.#holder.strong = this;
  }

  /** A reader ended; `early`: before the end of the stream (it broke out or returned). */
  leave(early: boolean): void {
    if (--this.#readers > 0) return;
    this.#holder.strong = undefined;
    if (early && !this.done) {
      this.closed = true;
      this.#events = [];
      this.#head = 0;
      this.#holder.close.abort();
    }
  }

  #notify(): void {
    const waiting = this.#waiting;
    if (waiting.length === 0) return;
    for (const w of waiting) w(); // resolving only schedules the reader: nothing is added meanwhile
    waiting.length = 0;
  }
}

/**
 * A {@link TurnStream} over `run`, which applies the signal, pushing its events into the sink
 * (the `outcome` event last) and resolving to the outcome. The runner's side reaches the buffer
 * through a weak reference while nobody reads (so a stream dropped unread is not kept alive by
 * its turn), and a strong one while a loop reads (a waiting loop is only reachable through it).
 * @internal
 */
export function turnStream(run: (sink: TurnSink, control: TurnStreamControl) => Promise<Outcome>): TurnStream {
  const holder: BufferHolder = { strong: undefined, weak: undefined, close: new AbortController() };
  const buffer = new TurnStreamBuffer(holder);
  const { outcome, receiptId } = feed(run, holder);
  const offsets = buffer.offsets;
  return {
    outcome,
    receiptId,
    offsetOf: (event: TurnEvent) =>
      typeof event === 'object' && (event as unknown) !== null ? offsets.get(event) : undefined,
    [Symbol.asyncIterator]: () => read(buffer),
    [TURN_STREAM_BUFFER]: buffer,
  } as TurnStream;
}

/** The buffer as the runner's side reaches it: `strong` while a loop reads (a waiting loop is only reachable through it). */
interface BufferHolder {
  strong: TurnStreamBuffer | undefined;
  weak: WeakRef<TurnStreamBuffer> | undefined;
  /** Aborted once no reader can read. */
  readonly close: AbortController;
}

/**
 * Runs the turn, feeding its events and end into the buffer `holder` reaches. A function of its
 * own: its closures must not share a scope that holds the buffer strongly.
 */
function feed(
  run: (sink: TurnSink, control: TurnStreamControl) => Promise<Outcome>,
  holder: BufferHolder,
): { outcome: Promise<Outcome>; receiptId: Promise<string | undefined> } {
  let setReceipt!: (receiptId: string | undefined) => void;
  const receiptId = new Promise<string | undefined>((resolve) => (setReceipt = resolve));
  const control: TurnStreamControl = { setReceipt, closed: holder.close.signal };
  const target = (): TurnStreamBuffer | undefined => holder.strong ?? holder.weak?.deref();
  const sink: TurnSink = (event, offset) => {
    target()?.push(event, offset);
  };
  CONTROLS.set(sink, control);
  const outcome = run(sink, control).then(
    (result) => {
      target()?.finish(undefined);
      return result;
    },
    (error: unknown) => {
      if (error instanceof QuietEnd) {
        target()?.finish(undefined);
        throw error.error;
      }
      target()?.finish({ error });
      throw error;
    },
  );
  outcome.catch(() => undefined); // handled here: a stream nobody reads must not raise an unhandled rejection
  const noReceipt = (): void => {
    setReceipt(undefined);
  };
  void outcome.then(noReceipt, noReceipt);
  return { outcome, receiptId };
}

async function* read(buffer: TurnStreamBuffer): AsyncGenerator<TurnEvent, void, undefined> {
  buffer.enter();
  let ended = false;
  try {
    for (;;) {
      if (buffer.closed) {
        ended = true;
        return;
      }
      const event = buffer.take();
      if (event !== undefined) {
        yield event;
        continue;
      }
      if (buffer.done) {
        ended = true;
        if (buffer.failure !== undefined) throw buffer.failure.error;
        return;
      }
      await buffer.wait();
    }
  } finally {
    buffer.leave(!ended);
  }
}

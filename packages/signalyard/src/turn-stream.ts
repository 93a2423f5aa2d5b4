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
 */
export interface TurnStream extends AsyncIterable<TurnEvent> {
  /** The turn's outcome, as `handle` / `dispatch` would have resolved it. */
  readonly outcome: Promise<Outcome>;
}

/** Where a streamed turn's events go. @internal */
export type TurnSink = (event: TurnEvent) => void;

/**
 * A {@link TurnStream} over `run`, which applies the signal, pushing its events into the sink
 * (the `outcome` event last) and resolving to the outcome. @internal
 */
export function turnStream(run: (sink: TurnSink) => Promise<Outcome>): TurnStream {
  const events: (TurnEvent | undefined)[] = [];
  let head = 0;
  // Every reader waiting for the next event (two loops may read one stream at once: each must wake).
  const waiting: (() => void)[] = [];
  const state: { done: boolean; failure: { error: unknown } | undefined } = { done: false, failure: undefined };
  const notify = (): void => {
    if (waiting.length === 0) return;
    for (const w of waiting) w(); // resolving only schedules the reader: nothing is added meanwhile
    waiting.length = 0;
  };
  const outcome = run((event) => {
    events.push(event);
    notify();
  }).then(
    (result) => {
      state.done = true;
      notify();
      return result;
    },
    (error: unknown) => {
      state.done = true;
      state.failure = { error };
      notify();
      throw error;
    },
  );
  outcome.catch(() => undefined); // handled here: a stream nobody reads must not raise an unhandled rejection
  async function* read(): AsyncGenerator<TurnEvent, void, undefined> {
    for (;;) {
      if (head < events.length) {
        const event = events[head] as TurnEvent;
        events[head++] = undefined; // read events are released
        yield event;
        continue;
      }
      if (state.done) {
        if (state.failure !== undefined) throw state.failure.error;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  }
  return { outcome, [Symbol.asyncIterator]: read };
}

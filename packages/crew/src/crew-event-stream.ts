import { AbortedError } from '@signalyard/core';

/**
 * Turns a push-based run into an `AsyncIterable`. `start` runs on the first `next()`, pushes
 * events through `emit` and settles when the run is over (it never rejects: the run reports
 * every failure as its final event); events are buffered until read. When the consumer stops
 * early (`break`, `return()`), the `AbortSignal` given to `start` fires so the run stops too.
 * @internal
 */
export async function* eventStream<T>(
  start: (emit: (event: T) => void, abortSignal: AbortSignal) => Promise<unknown>,
): AsyncGenerator<T, void, undefined> {
  let queue: (T | undefined)[] = [];
  let head = 0;
  // Fields of one object, not `let`s: they change in callbacks, which control-flow narrowing cannot see.
  const s: { wake: (() => void) | undefined; finished: boolean } = { wake: undefined, finished: false };
  const controller = new AbortController();
  const notify = (): void => {
    const w = s.wake;
    s.wake = undefined;
    if (w !== undefined) w();
  };
  const emit = (event: T): void => {
    queue.push(event);
    notify();
  };
  const done = (): void => {
    s.finished = true;
    notify();
  };
  start(emit, controller.signal).then(done, done);
  try {
    for (;;) {
      while (head < queue.length) {
        const event = queue[head] as T;
        queue[head++] = undefined;
        yield event;
      }
      queue = [];
      head = 0;
      if (s.finished) return;
      await new Promise<void>((resolve) => {
        s.wake = resolve;
      });
    }
  } finally {
    if (!s.finished) controller.abort(new AbortedError({ message: 'The stream consumer stopped reading' }));
  }
}

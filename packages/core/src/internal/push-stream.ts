import { AbortedError } from '../errors/aborted-error.js';

/**
 * Turns a push-based producer into an `AsyncIterable`. `start` runs on the first `next()` (so
 * its synchronous errors surface there), pushes events through `emit` and settles when done;
 * events are buffered until read, then released (the buffer never holds read events). A
 * rejection of `start` is thrown to the reader after the events emitted before it. When the
 * reader stops early (`break`, `return()`), the `AbortSignal` given to `start` fires so the
 * producer stops too.
 */
export async function* pushStream<T>(
  start: (emit: (event: T) => void, abortSignal: AbortSignal) => Promise<unknown>,
  stoppedMessage = 'The stream consumer stopped reading',
): AsyncGenerator<T, void, undefined> {
  let queue: (T | undefined)[] = [];
  let head = 0;
  // Fields of one object, not `let`s: they change in callbacks, which control-flow narrowing cannot see.
  const s: { wake: (() => void) | undefined; finished: boolean; failure: { error: unknown } | undefined } = {
    wake: undefined,
    finished: false,
    failure: undefined,
  };
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
  // async: a synchronous throw from `start` becomes a rejection, reported like any other failure
  const started = (async () => start(emit, controller.signal))();
  started.then(
    () => {
      s.finished = true;
      notify();
    },
    (error: unknown) => {
      s.failure = { error };
      s.finished = true;
      notify();
    },
  );
  try {
    for (;;) {
      while (head < queue.length) {
        const event = queue[head] as T;
        queue[head++] = undefined;
        yield event;
      }
      queue = [];
      head = 0;
      if (s.finished) {
        if (s.failure !== undefined) throw s.failure.error;
        return;
      }
      await new Promise<void>((resolve) => {
        s.wake = resolve;
      });
    }
  } finally {
    if (!s.finished) controller.abort(new AbortedError({ message: stoppedMessage }));
  }
}

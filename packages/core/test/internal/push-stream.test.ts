import { describe, expect, it } from 'vitest';
import { AbortedError } from '@signalyard/core';
import { pushStream } from '@signalyard/core/internal';
import { collect } from '@signalyard/test-utils';

describe('pushStream', () => {
  it('yields what the producer emits, in order, and ends when it settles', async () => {
    const events = await collect(
      pushStream<number>(async (emit) => {
        emit(1);
        await Promise.resolve();
        emit(2);
      }),
    );
    expect(events).toEqual([1, 2]);
  });

  it('starts the producer only on the first next()', async () => {
    let started = false;
    const stream = pushStream<number>(async () => {
      started = true;
    });
    expect(started).toBe(false);
    await stream.next();
    expect(started).toBe(true);
  });

  it('throws the producer failure after the events emitted before it', async () => {
    const failure = new Error('producer');
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const e of pushStream<number>(async (emit) => {
          emit(1);
          throw failure;
        }))
          seen.push(e);
      })(),
    ).rejects.toBe(failure);
    expect(seen).toEqual([1]);
  });

  it('a reader that stops early aborts the producer with an AbortedError', async () => {
    let seen: AbortSignal | undefined;
    const finished = new Promise<unknown>((resolve) => {
      void (async () => {
        for await (const e of pushStream<number>(async (emit, abortSignal) => {
          seen = abortSignal;
          emit(1);
          emit(2);
          await new Promise<void>((r) => abortSignal.addEventListener('abort', () => r()));
        })) {
          expect(e).toBe(1);
          break;
        }
        resolve(seen?.reason);
      })();
    });
    expect(AbortedError.isInstance(await finished)).toBe(true);
  });

  it('serves calls in order, as an async generator: next() calls made at once get the events in turn, a return() behind them waits', async () => {
    let release: (() => void) | undefined;
    let stopped: AbortSignal | undefined;
    const stream = pushStream<number>(async (emit, abortSignal) => {
      stopped = abortSignal;
      await new Promise<void>((r) => {
        release = r;
      });
      emit(1);
      emit(2);
      await new Promise<void>((r) => abortSignal.addEventListener('abort', () => r()));
    });
    const first = stream.next();
    const second = stream.next();
    const closed = stream.return(undefined);
    const after = stream.next();
    await Promise.resolve();
    (release as () => void)();
    expect(await first).toEqual({ value: 1, done: false });
    expect(await second).toEqual({ value: 2, done: false });
    expect(await closed).toEqual({ value: undefined, done: true });
    expect(await after).toEqual({ value: undefined, done: true });
    expect(AbortedError.isInstance(stopped?.reason)).toBe(true);
  });

  it('throw() before the first next() rejects with its error and never starts the producer', async () => {
    let started = false;
    const stream = pushStream<number>(async () => {
      started = true;
    });
    const error = new Error('stop');
    await expect(stream.throw(error)).rejects.toBe(error);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    expect(started).toBe(false);
  });

  it('with a controller given, start gets its signal and a reader that stops early aborts it', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const stream = pushStream<number>(
      async (emit, abortSignal) => {
        seen = abortSignal;
        emit(1);
        await new Promise<void>((r) => abortSignal.addEventListener('abort', () => r()));
      },
      'stopped reading',
      controller,
    );
    for await (const e of stream) {
      expect(e).toBe(1);
      break;
    }
    expect(seen).toBe(controller.signal);
    expect(AbortedError.isInstance(controller.signal.reason)).toBe(true);
    expect((controller.signal.reason as Error).message).toContain('stopped reading');
  });
});

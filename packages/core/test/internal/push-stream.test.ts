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
});

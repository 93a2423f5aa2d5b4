import { describe, expect, it } from 'vitest';
import { AbortedError } from '@signalyard/core';
import {
  abortedError,
  isAbortSignal,
  linkAbort,
  linkAbortSignals,
  onAbort,
  throwIfAborted,
  untilAborted,
} from '@signalyard/core/internal';

describe('abort helpers', () => {
  it('isAbortSignal recognises signals and rejects look-alikes', () => {
    expect(isAbortSignal(new AbortController().signal)).toBe(true);
    expect(isAbortSignal({ aborted: false, addEventListener() {}, removeEventListener() {} })).toBe(true);
    for (const v of [undefined, null, {}, 'x', 1, { aborted: 'no' }, { aborted: true }])
      expect(isAbortSignal(v)).toBe(false);
  });

  it('linkAbortSignals fires with the first reason, skips undefined, and passes one signal through', () => {
    const a = new AbortController();
    const b = new AbortController();
    expect(linkAbortSignals(undefined, undefined)).toBeUndefined();
    expect(linkAbortSignals(undefined, a.signal)).toBe(a.signal);
    const linked = linkAbortSignals(a.signal, undefined, b.signal)!;
    expect(linked.aborted).toBe(false);
    b.abort('b first');
    expect(linked.aborted).toBe(true);
    expect(linked.reason).toBe('b first');
  });

  it('abortedError keeps an AbortedError reason and wraps any other', () => {
    const own = new AbortedError({ message: 'mine' });
    expect(abortedError(AbortSignal.abort(own))).toBe(own);
    const wrapped = abortedError(AbortSignal.abort('why'), 'stopped');
    expect(AbortedError.isInstance(wrapped)).toBe(true);
    expect(wrapped.cause).toBe('why');
    expect(wrapped.message).toBe('stopped');
  });

  it('throwIfAborted throws only for a fired signal', () => {
    expect(() => {
      throwIfAborted(undefined);
    }).not.toThrow();
    expect(() => {
      throwIfAborted(new AbortController().signal);
    }).not.toThrow();
    expect(() => {
      throwIfAborted(AbortSignal.abort('x'));
    }).toThrow(AbortedError);
  });

  it('untilAborted settles like the value, or rejects at once when the signal fires', async () => {
    expect(await untilAborted(Promise.resolve(1), undefined)).toBe(1);
    expect(await untilAborted(2, new AbortController().signal)).toBe(2);
    const failure = new Error('own');
    await expect(untilAborted(Promise.reject(failure), new AbortController().signal)).rejects.toBe(failure);
    const controller = new AbortController();
    const never = new Promise<number>(() => undefined);
    const raced = untilAborted(never, controller.signal);
    controller.abort('stop');
    await expect(raced).rejects.toSatisfy((e: unknown) => AbortedError.isInstance(e) && e.cause === 'stop');
  });

  it('untilAborted with an already aborted signal rejects and handles the abandoned rejection', async () => {
    const late = Promise.reject(new Error('late'));
    await expect(untilAborted(late, AbortSignal.abort())).rejects.toSatisfy((e: unknown) => AbortedError.isInstance(e));
  });
});

describe('linkAbort', () => {
  it('aborts the target with the source reason, and unlinking stops it', () => {
    const source = new AbortController();
    const target = new AbortController();
    linkAbort(target, source.signal);
    source.abort('why');
    expect(target.signal.aborted).toBe(true);
    expect(target.signal.reason).toBe('why');

    const source2 = new AbortController();
    const target2 = new AbortController();
    const unlink = linkAbort(target2, source2.signal);
    unlink();
    unlink(); // idempotent
    source2.abort();
    expect(target2.signal.aborted).toBe(false);
  });

  it('aborts at once from an already aborted source, and is a no-op without one', () => {
    const source = new AbortController();
    source.abort('early');
    const target = new AbortController();
    linkAbort(target, source.signal)();
    expect(target.signal.reason).toBe('early');
    const lone = new AbortController();
    linkAbort(lone, undefined)();
    expect(lone.signal.aborted).toBe(false);
  });
});

describe('onAbort', () => {
  it('calls back once on abort, and not after it stops listening', () => {
    const a = new AbortController();
    let calls = 0;
    onAbort(a.signal, () => calls++);
    a.abort();
    a.abort();
    expect(calls).toBe(1);
    const b = new AbortController();
    const stop = onAbort(b.signal, () => calls++);
    stop();
    stop();
    b.abort();
    expect(calls).toBe(1);
  });
});

describe('isAbortSignal on hostile values', () => {
  it('is false for a Proxy whose every trap throws', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    expect(isAbortSignal(hostile)).toBe(false);
  });
});

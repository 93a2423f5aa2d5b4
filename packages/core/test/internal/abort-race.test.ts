import { describe, expect, it } from 'vitest';
import { AbortedError } from '@signalyard/core';
import { AbortRace, untilAborted } from '@signalyard/core/internal';

/** A promise the test settles by hand. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Counts the `abort` listeners a signal holds, through its add/remove methods. */
function countedSignal(controller: AbortController): { signal: AbortSignal; listeners: () => number } {
  const signal = controller.signal;
  let n = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
    n++;
    add(...args);
  };
  signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
    n--;
    remove(...args);
  };
  return { signal, listeners: () => n };
}

describe('AbortRace', () => {
  it('settles like each raced promise, values and rejections unchanged', async () => {
    const race = new AbortRace(new AbortController().signal);
    await expect(race.race(Promise.resolve(1))).resolves.toBe(1);
    await expect(race.race(2)).resolves.toBe(2);
    const boom = new Error('boom');
    await expect(race.race(Promise.reject(boom))).rejects.toBe(boom);
    race.dispose();
  });

  it('rejects every pending race with the AbortedError when the signal fires, even if the work never settles', async () => {
    const controller = new AbortController();
    const race = new AbortRace(controller.signal);
    const a = race.race(new Promise<never>(() => undefined));
    const b = race.race(deferred<number>().promise);
    controller.abort('stop');
    const [ea, eb] = await Promise.allSettled([a, b]);
    expect(ea.status === 'rejected' && AbortedError.isInstance(ea.reason)).toBe(true);
    expect(eb.status === 'rejected' && (eb.reason as AbortedError).cause).toBe('stop');
  });

  it('uses one abort listener for any number of races, and dispose removes it (idempotent)', async () => {
    const { signal, listeners } = countedSignal(new AbortController());
    const race = new AbortRace(signal);
    expect(listeners()).toBe(1);
    await Promise.all([race.race(Promise.resolve(1)), race.race(Promise.resolve(2)), race.race(3)]);
    expect(listeners()).toBe(1);
    race.dispose();
    race.dispose();
    expect(listeners()).toBe(0);
  });

  it('on an already aborted signal rejects at once, adds no listener, and handles the abandoned rejection', async () => {
    const controller = new AbortController();
    controller.abort();
    const { signal, listeners } = countedSignal(controller);
    const race = new AbortRace(signal);
    expect(listeners()).toBe(0);
    await expect(race.race(Promise.reject(new Error('late')))).rejects.toSatisfy((e: unknown) =>
      AbortedError.isInstance(e),
    );
    race.dispose();
  });

  it('a promise that settles after the abort no longer matters', async () => {
    const controller = new AbortController();
    const race = new AbortRace(controller.signal);
    const work = deferred<number>();
    const raced = race.race(work.promise);
    controller.abort();
    work.reject(new Error('after the abort'));
    await expect(raced).rejects.toSatisfy((e: unknown) => AbortedError.isInstance(e));
  });
});

describe('AbortRace.raceThen', () => {
  const twice = (v: number): number | string => v * 2;
  const named = (e: unknown): string => (AbortedError.isInstance(e) ? 'aborted' : `error: ${String(e)}`);

  it('settles like onValue of the value, or onError of a rejection', async () => {
    const race = new AbortRace(new AbortController().signal);
    await expect(race.raceThen(Promise.resolve(2), twice, named)).resolves.toBe(4);
    await expect(race.raceThen(3, twice, named)).resolves.toBe(6);
    await expect(race.raceThen(Promise.reject(new Error('boom')), twice, named)).resolves.toBe('error: Error: boom');
    race.dispose();
  });

  it('rejects with what a callback throws', async () => {
    const race = new AbortRace(new AbortController().signal);
    const bad = new Error('bad value');
    const thrower = (): never => {
      throw bad;
    };
    await expect(race.raceThen(1, thrower, named)).rejects.toBe(bad);
    await expect(race.raceThen(Promise.reject(new Error('x')), twice, thrower)).rejects.toBe(bad);
    race.dispose();
  });

  it('calls onError with the AbortedError as soon as the signal fires, and never onValue after', async () => {
    const controller = new AbortController();
    const race = new AbortRace(controller.signal);
    const work = deferred<number>();
    const seen: number[] = [];
    const result = race.raceThen(
      work.promise,
      (v) => {
        seen.push(v);
        return v;
      },
      (e) => {
        throw e;
      },
    );
    controller.abort('stop');
    const error = await result.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(AbortedError.isInstance(error) && error.cause).toBe('stop');
    work.resolve(7);
    await work.promise;
    await Promise.resolve();
    expect(seen).toEqual([]);
  });

  it('on an already aborted signal goes to onError at once and handles the abandoned rejection', async () => {
    const controller = new AbortController();
    controller.abort();
    const race = new AbortRace(controller.signal);
    await expect(race.raceThen(Promise.reject(new Error('late')), twice, named)).resolves.toBe('aborted');
  });
});

describe('untilAborted', () => {
  it('without a signal is Promise.resolve', async () => {
    await expect(untilAborted(5, undefined)).resolves.toBe(5);
  });

  it('removes its listener once the value settles', async () => {
    const { signal, listeners } = countedSignal(new AbortController());
    const work = deferred<string>();
    const raced = untilAborted(work.promise, signal);
    expect(listeners()).toBe(1);
    work.resolve('done');
    await expect(raced).resolves.toBe('done');
    expect(listeners()).toBe(0);
  });

  it('keeps an AbortedError reason as the rejection', async () => {
    const controller = new AbortController();
    const reason = new AbortedError({ message: 'closing' });
    const raced = untilAborted(new Promise<never>(() => undefined), controller.signal);
    controller.abort(reason);
    await expect(raced).rejects.toBe(reason);
  });
});

describe('AbortRace.watch', () => {
  it('calls each watcher once when the signal fires, through the one listener, and not after unwatching', () => {
    const controller = new AbortController();
    const { signal, listeners } = countedSignal(controller);
    const race = new AbortRace(signal);
    const calls: string[] = [];
    race.watch(() => calls.push('a'));
    const unwatch = race.watch(() => calls.push('b'));
    race.watch(() => calls.push('c'));
    expect(listeners()).toBe(1);
    unwatch();
    unwatch(); // idempotent
    controller.abort();
    expect(calls).toEqual(['a', 'c']);
    controller.signal.dispatchEvent(new Event('abort'));
    expect(calls).toEqual(['a', 'c']);
    race.dispose();
  });

  it('watches the same callback twice as two entries', () => {
    const controller = new AbortController();
    const race = new AbortRace(controller.signal);
    let n = 0;
    const callback = (): void => {
      n++;
    };
    race.watch(callback);
    const second = race.watch(callback);
    second();
    controller.abort();
    expect(n).toBe(1);
  });

  it('lets a watcher unwatch another while the abort is delivered, and races still reject', async () => {
    const controller = new AbortController();
    const race = new AbortRace(controller.signal);
    const seen: string[] = [];
    let unwatchLater: () => void = () => undefined;
    race.watch(() => {
      seen.push('first');
      unwatchLater();
    });
    unwatchLater = race.watch(() => seen.push('second'));
    const pending = race.race(new Promise(() => undefined));
    controller.abort();
    await expect(pending).rejects.toSatisfy((e: unknown) => AbortedError.isInstance(e));
    expect(seen).toEqual(['first']);
  });
});

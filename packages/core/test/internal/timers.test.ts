import { afterEach, describe, expect, it, vi } from 'vitest';
import { AbortedError } from '@signalyard/core';
import { MAX_TIMEOUT_MS, clampTimeout, deadline, isTimerDelay, sleep, startTimer } from '@signalyard/core/internal';

afterEach(() => {
  vi.useRealTimers();
});

describe('timer limits', () => {
  it('clampTimeout keeps delays within what setTimeout honours', () => {
    expect(clampTimeout(100)).toBe(100);
    expect(clampTimeout(-5)).toBe(0);
    expect(clampTimeout(Number.NaN)).toBe(0);
    expect(clampTimeout(Infinity)).toBe(MAX_TIMEOUT_MS);
    expect(clampTimeout(MAX_TIMEOUT_MS + 1)).toBe(MAX_TIMEOUT_MS);
  });

  it('deadline fires with its reason after the delay, under fake timers', async () => {
    vi.useFakeTimers();
    const d = deadline(1000, () => 'late');
    await vi.advanceTimersByTimeAsync(999);
    expect(d.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toBe('late');
  });

  it('a cleared deadline never fires, and an Infinity deadline sets no timer', async () => {
    vi.useFakeTimers();
    const d = deadline(10, () => 'x');
    d.clear();
    await vi.advanceTimersByTimeAsync(100);
    expect(d.signal.aborted).toBe(false);
    deadline(Infinity, () => 'never');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a delay beyond the limit is clamped rather than firing at once', async () => {
    vi.useFakeTimers();
    const d = deadline(MAX_TIMEOUT_MS * 10, () => 'x');
    await vi.advanceTimersByTimeAsync(1000);
    expect(d.signal.aborted).toBe(false);
    d.clear();
  });
});

describe('isTimerDelay', () => {
  it('accepts finite positive delays up to the limit, nothing else', () => {
    expect(isTimerDelay(1)).toBe(true);
    expect(isTimerDelay(MAX_TIMEOUT_MS)).toBe(true);
    for (const bad of [0, -1, MAX_TIMEOUT_MS + 1, Number.NaN, Infinity, '5', null, undefined]) {
      expect(isTimerDelay(bad)).toBe(false);
    }
  });
});

describe('startTimer', () => {
  it('fires after the delay unless cancelled', () => {
    vi.useFakeTimers();
    let fired = 0;
    startTimer(50, () => fired++);
    const cancel = startTimer(50, () => fired++, { unref: true });
    cancel();
    cancel();
    vi.advanceTimersByTime(49);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
  });
});

describe('sleep', () => {
  it('resolves after the delay (fake timers drive it)', async () => {
    vi.useFakeTimers();
    let done = false;
    const slept = sleep(1000).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await slept;
    expect(done).toBe(true);
  });

  it('rejects with the AbortedError when the signal fires first, and clears its timer', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const slept = sleep(1000, controller.signal);
    controller.abort('stop');
    await expect(slept).rejects.toMatchObject({ code: 'ABORTED', cause: 'stop' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects at once on an aborted signal, starting no timer', async () => {
    vi.useFakeTimers();
    await expect(sleep(1000, AbortSignal.abort())).rejects.toSatisfy((e: unknown) => AbortedError.isInstance(e));
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops listening to the signal once it has slept', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const slept = sleep(10, controller.signal);
    await vi.advanceTimersByTimeAsync(10);
    await slept;
    controller.abort(); // too late to matter: no unhandled rejection
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMEOUT_MS, clampTimeout, deadline, isTimerDelay, startTimer } from '@signalyard/core/internal';

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

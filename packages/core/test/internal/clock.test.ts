import { InvalidArgumentError, systemClock } from '@signalyard/core';
import { clockProblem, isClock, isoAt, isoNow, readClock } from '@signalyard/core/internal';
import { afterEach, describe, expect, it, vi } from 'vitest';

describe('isoAt', () => {
  it('formats milliseconds since the epoch as ISO 8601, also when asked again for another time', () => {
    expect(isoAt(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoAt(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoAt(1_700_000_000_123)).toBe('2023-11-14T22:13:20.123Z');
    expect(isoAt(0)).toBe('1970-01-01T00:00:00.000Z');
  });

  it('throws a RangeError for a time that has no date, and keeps serving afterwards', () => {
    expect(() => isoAt(Number.NaN)).toThrow(RangeError);
    expect(() => isoAt(9e15)).toThrow(RangeError);
    expect(isoAt(1)).toBe('1970-01-01T00:00:00.001Z');
  });
});

describe('isoNow', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is the current time, following the clock from one millisecond to the next', () => {
    vi.useFakeTimers({ now: new Date('2026-11-26T10:00:00.000Z') });
    expect(isoNow()).toBe('2026-11-26T10:00:00.000Z');
    vi.advanceTimersByTime(1);
    expect(isoNow()).toBe('2026-11-26T10:00:00.001Z');
    vi.setSystemTime(new Date('2026-11-26T09:00:00.000Z'));
    expect(isoNow()).toBe('2026-11-26T09:00:00.000Z');
  });
});

describe('systemClock', () => {
  it('reads Date.now, so faked timers move it', async () => {
    const { systemClock } = await import('@signalyard/core');
    vi.useFakeTimers({ now: 1_000 });
    expect(systemClock.now()).toBe(1_000);
    vi.setSystemTime(5_000);
    expect(systemClock.now()).toBe(5_000);
    vi.useRealTimers();
    expect(Object.isFrozen(systemClock)).toBe(true);
  });
});

describe('isClock and readClock', () => {
  it('a clock is anything with a now() method', () => {
    expect(isClock(systemClock)).toBe(true);
    expect(isClock({ now: () => 0 })).toBe(true);
    expect(isClock(Object.assign(() => 0, { now: () => 0 }))).toBe(true);
    expect(isClock(Date)).toBe(true); // Date.now is a clock's now()
    for (const bad of [undefined, null, 0, 'now', { now: 0 }, {}]) expect(isClock(bad)).toBe(false);
    expect(clockProblem(42)).toBe('expected a Clock { now(): number } (such as systemClock), got 42');
  });

  it('reads the clock, and refuses a reading that is not a time with CLOCK_INVALID', () => {
    expect(readClock({ now: () => 1_234 })).toBe(1_234);
    expect(readClock({ now: () => -8.64e15 })).toBe(-8.64e15);
    for (const bad of [Number.NaN, Infinity, 9e15, '1', undefined]) {
      let caught: unknown;
      try {
        readClock({ now: () => bad as number });
      } catch (error) {
        caught = error;
      }
      expect(InvalidArgumentError.isInstance(caught), String(bad)).toBe(true);
      expect((caught as InvalidArgumentError).code).toBe('CLOCK_INVALID');
    }
  });
});

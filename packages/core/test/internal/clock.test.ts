import { isoAt, isoNow } from '@signalyard/core/internal';
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

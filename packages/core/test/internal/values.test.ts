import { describe, expect, it } from 'vitest';
import { deepFreeze, isRecord } from '@signalyard/core/internal';

describe('isRecord', () => {
  it('is true for plain and class objects, false for null, arrays and primitives', () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord(Object.create(null))).toBe(true);
    expect(isRecord(new Map())).toBe(true);
    for (const v of [null, undefined, [], [1], 'x', 1, true, () => 1]) expect(isRecord(v)).toBe(false);
  });
});

describe('deepFreeze', () => {
  it('freezes nested objects and arrays in place and returns the same value', () => {
    const value = { a: { b: [1, { c: 2 }] }, d: 'x' };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a.b)).toBe(true);
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
  });

  it('returns primitives unchanged', () => {
    expect(deepFreeze(3)).toBe(3);
    expect(deepFreeze(null)).toBe(null);
    expect(deepFreeze('s')).toBe('s');
  });

  it('ends on cycles', () => {
    const a: Record<string, unknown> = { name: 'a' };
    const b: Record<string, unknown> = { a };
    a.b = b;
    deepFreeze(a);
    expect(Object.isFrozen(a) && Object.isFrozen(b)).toBe(true);
  });

  it('does not walk into an object that is already frozen', () => {
    const inner = { open: {} as Record<string, unknown> };
    const shell = Object.freeze({ inner });
    deepFreeze({ shell });
    expect(Object.isFrozen(inner)).toBe(false);
  });
});

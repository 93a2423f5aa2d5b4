import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { jsonEqual } from '@signalyard/core/internal';

describe('jsonEqual', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['equal numbers', 1, 1, true],
    ['0 and -0', 0, -0, true],
    ['NaN and NaN', Number.NaN, Number.NaN, true],
    ['a number and its string', 1, '1', false],
    ['null and undefined', null, undefined, false],
    ['null and an empty object', null, {}, false],
    ['an empty array and an empty object', [], {}, false],
    ['arrays of different lengths', [1], [1, 2], false],
    ['arrays in another order', [1, 2], [2, 1], false],
    ['objects in another key order', { a: 1, b: { c: [1] } }, { b: { c: [1] }, a: 1 }, true],
    ['objects with another key', { a: 1 }, { b: 1 }, false],
    ['an extra key', { a: 1 }, { a: 1, b: 2 }, false],
    ['an undefined key, as in JSON', { a: 1, b: undefined }, { a: 1 }, true],
    ['an inherited key does not count', Object.create({ a: 1 }) as unknown, {}, true],
  ])('%s', (_title, a, b, expected) => {
    expect(jsonEqual(a, b)).toBe(expected);
    expect(jsonEqual(b, a)).toBe(expected);
  });

  it('gives up (unequal) on cyclic data instead of overflowing the stack', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    const b: Record<string, unknown> = {};
    b.self = b;
    expect(jsonEqual(a, b)).toBe(false);
    expect(jsonEqual(a, a)).toBe(true);
  });

  it('property: agrees with comparing JSON texts of key-sorted values', () => {
    const sorted = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sorted)
        : typeof v === 'object' && v !== null
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
            )
          : v;
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(jsonEqual(a, b)).toBe(JSON.stringify(sorted(a)) === JSON.stringify(sorted(b)));
        expect(jsonEqual(a, structuredClone(a))).toBe(true);
      }),
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeValue } from '@signalyard/core';

describe('describeValue', () => {
  it.each<[string, unknown, string]>([
    ['a string, quoted', 'idle', '"idle"'],
    ['the empty string', '', '""'],
    ['a string with quotes and control characters, escaped', 'a"b\n', '"a\\"b\\n"'],
    ['a number', 42, '42'],
    ['NaN', Number.NaN, 'NaN'],
    ['-Infinity', Number.NEGATIVE_INFINITY, '-Infinity'],
    ['a boolean', true, 'true'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['a BigInt, with its n', 12n, '12n'],
    ['a symbol, with its description', Symbol('tag'), 'Symbol(tag)'],
    ['a function, by kind', () => 1, 'a function'],
    ['an array, as JSON', [1, 2], '[1,2]'],
    ['a small object, as JSON', { type: 'fsm', state: 'idle' }, '{"type":"fsm","state":"idle"}'],
    ['an object without a prototype, as JSON', Object.assign(Object.create(null) as object, { a: 1 }), '{"a":1}'],
  ])('renders %s', (_title, value, text) => {
    expect(describeValue(value)).toBe(text);
  });

  it('truncates an object’s JSON to 80 characters, ending in "..."', () => {
    const text = describeValue({ text: 'x'.repeat(500) });
    expect(text).toHaveLength(80);
    expect(text.startsWith('{"text":"xxx')).toBe(true);
    expect(text.endsWith('...')).toBe(true);
  });

  it('keeps an object’s JSON of exactly 80 characters whole', () => {
    const value = { t: 'x'.repeat(72) }; // {"t":"…"} is 8 characters of punctuation and key
    expect(JSON.stringify(value)).toHaveLength(80);
    expect(describeValue(value)).toBe(JSON.stringify(value));
  });

  it.each<[string, unknown]>([
    [
      'a cyclic object',
      (() => {
        const o: Record<string, unknown> = {};
        o.self = o;
        return o;
      })(),
    ],
    ['an object whose toJSON gives undefined', { toJSON: () => undefined }],
    [
      'an object with a throwing getter',
      {
        get a(): never {
          throw new Error('getter');
        },
      },
    ],
    ['an object holding a BigInt', { n: 1n }],
  ])('renders %s as "an object" instead of throwing', (_title, value) => {
    expect(describeValue(value)).toBe('an object');
  });

  it('never throws, even for a revoked proxy', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(() => describeValue(proxy)).not.toThrow();
  });

  it('never throws and always returns a string, for anything', () => {
    const arbitrary = fc.anything({
      withBigInt: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withTypedArray: true,
      withSparseArray: true,
      withBoxedValues: true,
      withNullPrototype: true,
    });
    fc.assert(
      fc.property(arbitrary, (value) => {
        const text = describeValue(value);
        expect(text).toBeTypeOf('string');
        if (typeof value === 'object' && value !== null) expect(text.length).toBeLessThanOrEqual(80);
      }),
      { numRuns: 300 },
    );
  });
});

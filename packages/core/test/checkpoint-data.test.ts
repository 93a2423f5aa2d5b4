import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CheckpointDataError, SignalyardError, isSignalyardError } from '@signalyard/core';
import {
  assertCheckpointKey,
  assertExpectedVersion,
  serializeCheckpointData,
  storeClosedError,
} from '@signalyard/core/internal';
import { throwsCode } from './helpers.js';

/** serializeCheckpointData(data) throws a CheckpointDataError; returns it. */
function dataError(data: unknown, key?: string): CheckpointDataError {
  const error = throwsCode(() => serializeCheckpointData(data, key), 'CHECKPOINT_DATA_INVALID');
  if (!CheckpointDataError.isInstance(error))
    return expect.unreachable(`expected a CheckpointDataError, got ${error.name}`);
  return error;
}

function cyclic(): Record<string, unknown> {
  const a: Record<string, unknown> = { name: 'a' };
  a.self = { back: a };
  return a;
}

describe('serializeCheckpointData: JSON-safe data', () => {
  class Point {
    constructor(
      readonly x: number,
      readonly y: number,
    ) {}
    get sum(): number {
      return this.x + this.y;
    }
    norm(): number {
      return Math.hypot(this.x, this.y);
    }
  }

  it.each([
    ['an object', { a: 1, b: 'two', c: [true, false, null] }],
    ['an array', [1, 'a', null, { b: [] }]],
    ['a top-level string', 'just a string'],
    ['a top-level number', 42],
    ['a top-level boolean', false],
    ['null', null],
    ['negative zero', -0],
    ['the edges of double precision', [Number.MAX_VALUE, Number.MIN_VALUE, Number.MAX_SAFE_INTEGER, -1e-300]],
    ['awkward unicode', { nul: 'a\u0000b', lone: '\ud800', emoji: '👩‍👩‍👧‍👦', 'key with "quotes"': '\u2028' }],
    ['undefined properties (they vanish)', { gone: undefined, kept: 1 }],
    ['undefined array items (they become null)', [undefined, 1]],
    ['a sparse array', [1, , 3]], // eslint-disable-line no-sparse-arrays
    ['a Date (through its toJSON)', { at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) }],
    ['an invalid Date (toJSON gives null)', { at: new Date(Number.NaN) }],
    ['a class instance (own fields only; methods and getters on the prototype are skipped)', new Point(3, 4)],
    ['symbol-keyed properties (JSON ignores them)', { a: 1, [Symbol('hidden')]: () => 1 }],
    ['a Map and a Set (they have no enumerable own fields)', { m: new Map([[1, 2]]), s: new Set([1]) }],
  ])('%s serializes exactly as JSON.stringify does', (_title, value) => {
    expect(serializeCheckpointData(value)).toBe(JSON.stringify(value));
  });

  it('shared (non-cyclic) references are fine', () => {
    const shared = { x: 1, list: [1, 2] };
    const data = { a: shared, b: [shared, shared], c: { d: shared } };
    expect(serializeCheckpointData(data)).toBe(JSON.stringify(data));
  });

  it('the same object at many depths of one branch (a diamond, not a cycle) is fine', () => {
    const leaf = { v: 1 };
    const mid = { left: leaf, right: leaf };
    const data = { top: mid, again: { mid, leaf } };
    expect(JSON.parse(serializeCheckpointData(data))).toEqual({
      top: { left: { v: 1 }, right: { v: 1 } },
      again: { mid: { left: { v: 1 }, right: { v: 1 } }, leaf: { v: 1 } },
    });
  });

  it('toJSON is honoured, at the top level and nested', () => {
    const money = { cents: 1234, toJSON: () => '12.34 EUR' };
    expect(serializeCheckpointData(money)).toBe('"12.34 EUR"');
    expect(serializeCheckpointData({ price: money, list: [money] })).toBe('{"price":"12.34 EUR","list":["12.34 EUR"]}');
  });

  it('a toJSON that returns undefined makes a property vanish, as in JSON.stringify', () => {
    const data = { a: { toJSON: () => undefined }, b: 1 };
    expect(serializeCheckpointData(data)).toBe('{"b":1}');
  });

  it('a function whose toJSON gives JSON is serialized through its toJSON', () => {
    const fn = Object.assign(() => 1, { toJSON: () => 'fn' });
    expect(serializeCheckpointData({ fn })).toBe('{"fn":"fn"}');
  });
});

describe('serializeCheckpointData: values JSON cannot represent', () => {
  it.each([
    ['NaN', { a: { b: [1, 2, Number.NaN] } }, '$.a.b[2]', 'NaN'],
    ['Infinity', { list: [1, Number.POSITIVE_INFINITY] }, '$.list[1]', 'Infinity'],
    ['-Infinity at the top level', Number.NEGATIVE_INFINITY, '$', '-Infinity'],
    ['a BigInt', { deep: { n: 10n } }, '$.deep.n', '10n'],
    ['a top-level BigInt', 10n, '$', '10n'],
    ['a function property (JSON.stringify would drop it)', { f: () => 1 }, '$.f', 'function'],
    ['a function array item (JSON.stringify would write null)', [0, () => 1], '$[1]', 'function'],
    ['a top-level function', () => 1, '$', 'function'],
    ['a symbol property', { s: Symbol('s') }, '$.s', 'symbol'],
    ['a symbol array item', [Symbol('s')], '$[0]', 'symbol'],
    ['an object cycle', cyclic(), '$.self.back', 'cycle'],
    ['NaN returned by a toJSON', { m: { toJSON: () => Number.NaN } }, '$.m', 'NaN'],
  ])('rejects %s with CHECKPOINT_DATA_INVALID whose path names the location', (_title, data, path, problem) => {
    const error = dataError(data);
    expect(error.path).toBe(path);
    expect(error.message).toContain(path);
    expect(error.message).toContain(problem);
  });

  it('rejects an array that contains itself, at the item that closes the cycle', () => {
    const list: unknown[] = [1];
    list.push({ back: list });
    expect(dataError(list).path).toBe('$[1].back');
  });

  it('rejects a boxed BigInt (which JSON.stringify itself cannot serialize) with CHECKPOINT_DATA_INVALID', () => {
    const error = dataError({ a: Object(10n) as object });
    expect(error.message).toContain('BigInt');
  });

  it('rejects undefined data with CHECKPOINT_DATA_INVALID at $', () => {
    expect(dataError(undefined).path).toBe('$');
  });

  it('rejects a top-level symbol and a top-level toJSON giving undefined at $', () => {
    expect(dataError(Symbol('s')).path).toBe('$');
    expect(dataError({ toJSON: () => undefined }).path).toBe('$');
  });

  it('names the first bad value in JSON.stringify order when there are several', () => {
    expect(dataError({ ok: 1, first: Number.NaN, second: Number.POSITIVE_INFINITY }).path).toBe('$.first');
    expect(dataError([0, [1, 10n], Number.NaN]).path).toBe('$[1][1]');
  });

  it('names the checkpoint key in the message when one is given', () => {
    const error = dataError({ n: Number.NaN }, 'agent:main:main');
    expect(error.message).toContain('"agent:main:main"');
    expect(error.message).toContain('$.n');
  });

  it('the error is a SignalyardError', () => {
    expect(SignalyardError.isInstance(dataError(Number.NaN))).toBe(true);
  });

  it('a path through a key that is not an identifier uses bracket notation', () => {
    expect(dataError({ 'a b': { c: Number.NaN } }).path).toBe('$["a b"].c');
    expect(dataError({ list: [{ 'x-y': 10n }] }).path).toBe('$.list[0]["x-y"]');
  });

  it('a throwing toJSON yields CHECKPOINT_DATA_INVALID, not the raw error', () => {
    const data = {
      a: {
        toJSON: (): never => {
          throw new Error('boom in toJSON');
        },
      },
    };
    const error = dataError(data);
    expect(error.message).toContain('boom in toJSON');
  });

  it('a throwing getter yields CHECKPOINT_DATA_INVALID, not the raw error', () => {
    const data = {
      get a(): never {
        throw new Error('boom in getter');
      },
    };
    const error = dataError(data);
    expect(error.message).toContain('boom in getter');
  });

  it('data nested too deeply for JSON.stringify is refused with CHECKPOINT_DATA_INVALID, not a RangeError', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    let expected: string | undefined;
    try {
      expected = JSON.stringify(deep);
    } catch {
      expected = undefined;
    }
    if (expected === undefined) dataError(deep);
    else expect(serializeCheckpointData(deep)).toBe(expected);
  });
});

describe('serializeCheckpointData: properties', () => {
  it('for any JSON value, the output is exactly JSON.stringify of it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(serializeCheckpointData(value)).toBe(JSON.stringify(value));
      }),
    );
  });

  it('for anything, it returns exactly JSON.stringify(v) or throws CHECKPOINT_DATA_INVALID, never another error', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        let text: string;
        try {
          text = serializeCheckpointData(value);
        } catch (error) {
          expect(CheckpointDataError.isInstance(error), `threw ${String(error)}`).toBe(true);
          return;
        }
        expect(text).toBe(JSON.stringify(value));
      }),
      { numRuns: 300 },
    );
  });

  it('for anything including BigInts, dates, maps, sets, typed and sparse arrays and boxed values, the same holds', () => {
    const arbitrary = fc.anything({
      withBigInt: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withTypedArray: true,
      withSparseArray: true,
      withBoxedValues: true,
      withNullPrototype: true,
      withObjectString: true,
    });
    fc.assert(
      fc.property(arbitrary, (value) => {
        let text: string;
        try {
          text = serializeCheckpointData(value);
        } catch (error) {
          expect(CheckpointDataError.isInstance(error), `threw ${String(error)}`).toBe(true);
          return;
        }
        expect(text).toBe(JSON.stringify(value));
      }),
      { numRuns: 300 },
    );
  });

  it('whenever the data holds a NaN or an infinity, it is refused', () => {
    const bad = fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY);
    fc.assert(
      fc.property(fc.jsonValue(), bad, fc.nat(), (value, poison, seed) => {
        // Put the bad number somewhere inside a JSON value: as a sibling of it, at a depth chosen by the seed.
        let data: unknown = [value, poison];
        for (let i = 0; i < seed % 4; i++) data = i % 2 === 0 ? { k: data } : [data];
        throwsCode(() => serializeCheckpointData(data), 'CHECKPOINT_DATA_INVALID');
      }),
    );
  });
});

describe('assertCheckpointKey', () => {
  it('accepts a non-empty string', () => {
    expect(() => {
      assertCheckpointKey('agent:main:main');
    }).not.toThrow();
  });

  it.each([
    ['the empty string', '', '""'],
    ['a number', 42, '42'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['an object', { key: 'k' }, '{"key":"k"}'],
  ])('rejects %s with CHECKPOINT_KEY_INVALID naming the value', (_title, key, shown) => {
    const error = throwsCode(() => {
      assertCheckpointKey(key);
    }, 'CHECKPOINT_KEY_INVALID');
    expect(error.message).toContain(shown);
  });
});

describe('assertExpectedVersion', () => {
  it.each([0, 1, 17, Number.MAX_SAFE_INTEGER])('accepts %d', (version) => {
    expect(() => {
      assertExpectedVersion(version);
    }).not.toThrow();
  });

  it.each([
    ['a negative number', -1, '-1'],
    ['a fraction', 1.5, '1.5'],
    ['NaN', Number.NaN, 'NaN'],
    ['Infinity', Number.POSITIVE_INFINITY, 'Infinity'],
    ['an unsafe integer', 2 ** 53, String(2 ** 53)],
    ['a numeric string', '1', '"1"'],
    ['a BigInt', 1n, '1n'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
  ])('rejects %s with CHECKPOINT_VERSION_INVALID naming the value', (_title, version, shown) => {
    const error = throwsCode(() => {
      assertExpectedVersion(version);
    }, 'CHECKPOINT_VERSION_INVALID');
    expect(error.message).toContain(shown);
  });
});

describe('storeClosedError', () => {
  it('returns (does not throw) a CHECKPOINT_STORE_CLOSED error naming the store', () => {
    const error = storeClosedError('SqliteCheckpointStore');
    expect(isSignalyardError(error, 'CHECKPOINT_STORE_CLOSED')).toBe(true);
    expect(error.message).toContain('SqliteCheckpointStore');
  });

  it('returns a new error each time', () => {
    expect(storeClosedError('S')).not.toBe(storeClosedError('S'));
  });
});

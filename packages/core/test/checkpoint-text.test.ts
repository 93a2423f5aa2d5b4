import { isSignalyardError } from '@signalyard/core';
import {
  assertKeyPrefix,
  assertTextCheckpointKey,
  compareCodeUnits,
  keyPrefixRange,
  keyPrefixUpperBound,
  keysWithPrefix,
  unstorableTextIndex,
} from '@signalyard/core/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

describe('unstorableTextIndex', () => {
  it('finds NUL and lone surrogates, and accepts well-formed text', () => {
    expect(unstorableTextIndex('agent:main:main')).toBe(-1);
    expect(unstorableTextIndex('emoji 😀 ok')).toBe(-1);
    expect(unstorableTextIndex('a\u0000b')).toBe(1);
    expect(unstorableTextIndex('x\ud800y')).toBe(1);
    expect(unstorableTextIndex('\udc00')).toBe(0);
    expect(unstorableTextIndex('end\ud83d')).toBe(3);
    expect(unstorableTextIndex('')).toBe(-1);
  });

  // A CPU-bound property run: under coverage on a busy 2-core machine it can take more than
  // vitest's default 5 s (a time limit, not a timing assertion).
  it('agrees with a UTF-8 round trip on arbitrary strings (NUL aside)', { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const roundTrips = Buffer.from(s, 'utf8').toString('utf8') === s && !s.includes('\u0000');
        expect(unstorableTextIndex(s) === -1).toBe(roundTrips);
      }),
    );
  });
});

describe('assertTextCheckpointKey', () => {
  it('accepts storable keys and refuses NUL, lone surrogates and what assertCheckpointKey refuses', () => {
    expect(() => assertTextCheckpointKey('agent:a:dm:1', 'SQLite')).not.toThrow();
    for (const bad of ['a\u0000', '\ud800', '', 42]) {
      try {
        assertTextCheckpointKey(bad, 'SQLite');
        expect.unreachable();
      } catch (error) {
        expect(isSignalyardError(error, 'CHECKPOINT_KEY_INVALID')).toBe(true);
      }
    }
    expect(() => assertTextCheckpointKey('a\u0000', 'PostgreSQL')).toThrow(/PostgreSQL text cannot store it/);
  });
});

describe('keyPrefixUpperBound', () => {
  it('is the smallest string above every string with the prefix', () => {
    expect(keyPrefixUpperBound('agent:a')).toBe('agent:b');
    expect(keyPrefixUpperBound('a\u{10ffff}')).toBe('b');
    expect(keyPrefixUpperBound('\ud7ff')).toBe('\ue000');
    expect(keyPrefixUpperBound('😀')).toBe('😁');
    expect(keyPrefixUpperBound('')).toBeUndefined();
    expect(keyPrefixUpperBound('\u{10ffff}\u{10ffff}')).toBeUndefined();
  });

  it('bounds every extension of the prefix in code point order', () => {
    const cp = (s: string): number[] => Array.from(s, (c) => c.codePointAt(0) as number);
    const less = (a: string, b: string): boolean => {
      const x = cp(a);
      const y = cp(b);
      for (let i = 0; i < Math.min(x.length, y.length); i++)
        if (x[i] !== y[i]) return (x[i] as number) < (y[i] as number);
      return x.length < y.length;
    };
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1 }), fc.string({ unit: 'grapheme' }), (prefix, rest) => {
        const bound = keyPrefixUpperBound(prefix);
        if (bound === undefined) return;
        expect(less(prefix + rest, bound)).toBe(true);
      }),
    );
  });
});

describe('compareCodeUnits', () => {
  it('orders by UTF-16 code units and never says two different strings are equal', () => {
    expect(['b', 'a', 'B', 'ab'].sort(compareCodeUnits)).toEqual(['B', 'a', 'ab', 'b']);
    expect(compareCodeUnits('x', 'x')).toBe(0);
  });
});

describe('keyPrefixRange', () => {
  it('is [prefix, upper bound) for a storable prefix, and unbounded above for the empty one', () => {
    expect(keyPrefixRange('agent:a')).toEqual({ from: 'agent:a', to: 'agent:b' });
    expect(keyPrefixRange('')).toEqual({ from: '', to: undefined });
    expect(keyPrefixRange('\u{10FFFF}')).toEqual({ from: '\u{10FFFF}', to: undefined });
  });

  it('cuts a prefix at a NUL or a lone surrogate, so the scan still holds every key with the prefix', () => {
    expect(keyPrefixRange('ab\0cd')).toEqual({ from: 'ab', to: 'ac' });
    expect(keyPrefixRange('x\uD800y')).toEqual({ from: 'x', to: 'y' });
  });

  it('refuses a prefix that is not a string, naming it', () => {
    for (const bad of [7, null, undefined, {}, ['a']]) {
      let error: unknown;
      try {
        keyPrefixRange(bad);
      } catch (e) {
        error = e;
      }
      expect(isSignalyardError(error, 'CHECKPOINT_KEY_INVALID')).toBe(true);
      expect((error as Error).message).toMatch(/Invalid key prefix .*expected a string/);
    }
    expect(() => {
      assertKeyPrefix(7);
    }).toThrow(/Invalid key prefix 7: expected a string/);
    expect(() => {
      assertKeyPrefix('');
    }).not.toThrow();
  });
});

describe('keysWithPrefix', () => {
  it('keeps the string keys with the whole prefix, in code-unit order', () => {
    const scanned = ['ab\0z', 'ab', 'ab\0', 7, 'ab\0a', null, '\u{1F600}', 'ab\0\uFFFF'];
    expect(keysWithPrefix(scanned, 'ab\0')).toEqual(['ab\0', 'ab\0a', 'ab\0z', 'ab\0\uFFFF']);
    expect(keysWithPrefix(['b', '\uFF5E', '\u{1F600}', 'a'], '')).toEqual(['a', 'b', '\u{1F600}', '\uFF5E']);
    expect(keysWithPrefix([], 'x')).toEqual([]);
  });

  it('agrees with filtering and sorting on arbitrary keys', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary' })),
        fc.string({ unit: 'binary', maxLength: 3 }),
        (keys, prefix) => {
          const expected = keys.filter((k) => k.startsWith(prefix)).sort(compareCodeUnits);
          expect(keysWithPrefix(keys, prefix)).toEqual(expected);
        },
      ),
    );
  });
});

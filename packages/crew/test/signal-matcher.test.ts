import { describe, expect, expectTypeOf, it } from 'vitest';
import { isSignalyardError } from '@signalyard/core';
import { SignalMatcher, signalMatches } from '@signalyard/crew';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isSignalyardError(error) ? error.code : `not a SignalyardError: ${String(error)}`;
  }
  return undefined;
}

describe('SignalMatcher', () => {
  const matcher = new SignalMatcher([
    '[DONE]',
    '[ASK_STUDENT]',
    '[ROUTE EXECUTOR]',
    'plain marker',
    '[[handoff:coder]]',
  ]);

  it('returns the index of every matching signal, in list order, whatever the level', () => {
    expect(matcher.matchAll('[ route executor ] first, then [ASK_STUDENT], then PLAIN MARKER')).toEqual([1, 2, 3]);
    expect(matcher.matchAll('[[handoff:coder]] and [ Done ]')).toEqual([0, 4]);
  });

  it('returns an empty list when nothing matches', () => {
    expect(matcher.matchAll('nothing here [DONE_EXAM] [ROUTE_EXECUTOR]')).toEqual([]);
    expect(matcher.matchAll('')).toEqual([]);
  });

  it('first() is the lowest matching index, not the first level to hit', () => {
    // [DONE] only matches at level 3, [ASK_STUDENT] exactly: list order still wins.
    expect(matcher.first('[ASK_STUDENT] [ done ]')).toBe(0);
    expect(matcher.first('[ASK_STUDENT] [ done ]')).toBe(matcher.matchAll('[ASK_STUDENT] [ done ]')[0]);
    expect(matcher.first('[ASK_STUDENT] plain marker')).toBe(1);
    expect(matcher.first('[ask_student] [ route  executor ]')).toBe(1);
    expect(matcher.first('just [ route  executor ]')).toBe(2);
    expect(matcher.first('[DONE]')).toBe(0);
    expect(matcher.first('no markers')).toBeUndefined();
  });

  it('reports duplicate signals under each of their indexes', () => {
    const dup = new SignalMatcher(['[A]', '[B]', '[a]', '[ A ]']);
    expect(dup.matchAll('[ a ]')).toEqual([0, 2, 3]);
    expect(dup.matchAll('[A]')).toEqual([0, 2, 3]);
    expect(dup.first('[b] [a]')).toBe(0);
  });

  it('is reusable: one reply does not leak into the next', () => {
    const m = new SignalMatcher(['[A]', '[B]']);
    expect(m.matchAll('[a] [ b ]')).toEqual([0, 1]);
    expect(m.matchAll('[ b ]')).toEqual([1]);
    expect(m.first('[ b ]')).toBe(1);
    expect(m.matchAll('none')).toEqual([]);
    expect(m.first('[A]')).toBe(0);
  });

  it('finds several level-3 signals in one pass, including overlapping [[[ spans', () => {
    const m = new SignalMatcher(['[X]', '[Y Z]', '[W]']);
    expect(m.matchAll('[[[ x ] and [[ y\n z ]')).toEqual([0, 1]);
    expect(m.first('[[[ y  z ]')).toBe(1);
  });

  it('with no signals matches nothing', () => {
    const empty = new SignalMatcher([]);
    expect(empty.matchAll('[A]')).toEqual([]);
    expect(empty.first('[A]')).toBeUndefined();
  });

  it('keeps a frozen copy of its signals', () => {
    const list = ['[A]'];
    const m = new SignalMatcher(list);
    list.push('[B]');
    expect(m.signals).toEqual(['[A]']);
    expect(Object.isFrozen(m.signals)).toBe(true);
    expect(m.matchAll('[B]')).toEqual([]);
  });

  it('accepts the empty signal and never matches it, like signalMatches', () => {
    const m = new SignalMatcher(['', '[A]', '']);
    for (const content of ['', 'x [A] y', '[a]', 'nothing']) {
      expect(m.matchAll(content)).toEqual([0, 1, 2].filter((i) => signalMatches(m.signals[i]!, content)));
    }
    expect(m.matchAll('x [A] y')).toEqual([1]);
    expect(m.first('x [A] y')).toBe(1);
    expect(m.first('')).toBeUndefined();
    expect(new SignalMatcher(['']).matchAll('anything')).toEqual([]);
  });

  it('rejects anything but a list of strings with CREW_SIGNAL_INVALID', () => {
    expect(codeOf(() => new SignalMatcher(['[A]', 7 as unknown as string]))).toBe('CREW_SIGNAL_INVALID');
    expect(codeOf(() => new SignalMatcher('[A]' as unknown as string[]))).toBe('CREW_SIGNAL_INVALID');
    expect(codeOf(() => new SignalMatcher(undefined as unknown as string[]))).toBe('CREW_SIGNAL_INVALID');
  });

  it('rejects non-string content with CREW_CONTENT_INVALID', () => {
    expect(codeOf(() => matcher.matchAll(null as unknown as string))).toBe('CREW_CONTENT_INVALID');
    expect(codeOf(() => matcher.first(42 as unknown as string))).toBe('CREW_CONTENT_INVALID');
  });

  it('has the contract types', () => {
    expectTypeOf<SignalMatcher['matchAll']>().toEqualTypeOf<(content: string) => number[]>();
    expectTypeOf<SignalMatcher['first']>().toEqualTypeOf<(content: string) => number | undefined>();
    expectTypeOf<ConstructorParameters<typeof SignalMatcher>>().toEqualTypeOf<[signals: readonly string[]]>();
  });
});

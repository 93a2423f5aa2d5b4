import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SignalMatcher, signalMatches } from '@signalyard/crew';

// The one-pass matcher finds bracketed signals by walking bracket spans and other signals from an
// anchor character (a rare ASCII non-letter) without lowercasing the reply. These tests aim at
// the places where that could drift from `signalMatches`: characters whose lowercase is longer
// (U+0130) or ASCII (U+212A), the context-dependent final sigma, non-ASCII next to an anchor,
// many signals sharing an anchor, and anchors at the very ends of the reply.

const expected = (signals: readonly string[], content: string): number[] =>
  signals.flatMap((s, i) => (signalMatches(s, content) ? [i] : []));

function agrees(signals: readonly string[], content: string): void {
  const matcher = new SignalMatcher(signals);
  const want = expected(signals, content);
  expect(matcher.matchAll(content)).toEqual(want);
  expect(matcher.first(content)).toBe(want[0]);
}

describe('SignalMatcher, one pass', () => {
  it('finds anchored signals at levels 1 and 2 without lowercasing the whole reply', () => {
    const signals = ['[[handoff:coder]]', '[[handoff:critic]]', 'call #42', 'HANDOFF:Reviewer;'];
    const m = new SignalMatcher(signals);
    expect(m.matchAll('x [[HANDOFF:Critic]] y')).toEqual([1]);
    expect(m.matchAll('[[handoff:coder]]')).toEqual([0]);
    expect(m.matchAll('please CALL #42 now, handoff:reviewer;')).toEqual([2, 3]);
    expect(m.matchAll('[[handoff:code]] call #4 handoff:reviewer')).toEqual([]);
  });

  it('matches an anchor at either end of the reply, and not past it', () => {
    const signals = [':end', 'start:', 'a:b'];
    agrees(signals, ':end');
    agrees(signals, 'start:');
    agrees(signals, ':en');
    agrees(signals, 'tart:');
    agrees(signals, 'A:B');
    agrees(signals, ':');
  });

  it('lowercases U+0130 into two code units: the reply and its lowercase no longer line up', () => {
    // "İ" lowercases to "i̇" (i + U+0307): a signal can match across that expansion.
    agrees(['\u0307:x'], 'İ:X');
    agrees(['i\u0307:x'], 'İ:X');
    agrees(['[[go:b]]', '[[go:a]]', ':a]]'], 'İİİ [[GO:A]] İ');
    agrees(['[[go:b]]', '[[go:a]]'], 'İ[[go:b]]');
    // an ASCII signal can end on the "i" of a lowercased İ, but not go past it
    agrees([':i', ':i:', 'a:i', 'b:i'], ':İ: a:İ');
    expect(new SignalMatcher([':i', ':i:', 'a:i', 'b:i']).matchAll(':İ: a:İ')).toEqual([0, 2]);
    expect(new SignalMatcher(['\u0307:x']).matchAll('İ:X')).toEqual([0]);
  });

  it('lowercases the Kelvin sign to an ASCII k, and sigma by its context', () => {
    agrees(['k:1', 'K:1'], '\u212a:1');
    agrees(['#σ', '#ς', '#Σ'], 'A#Σ');
    agrees(['#σ', '#ς', '#Σ'], 'A#ΣB');
    agrees(['aς#', 'AΣ#'], 'AΣ#');
    agrees(['[aς]', '[AΣ]', '[aσ]'], '[AΣ]');
  });

  it('tells apart many signals that share an anchor and a prefix', () => {
    const names = ['planner', 'coder', 'critic', 'cook', 'c', 'tester', 'translator', 'x'];
    const signals = names.map((n) => `[[handoff:${n}]]`);
    for (const content of [
      'a [[handoff:cook]] b',
      '[[HANDOFF:C]][[handoff:X]]',
      '[[handoff:translatorr]] [[handoff:critic]',
      '[[handoff:c]]]',
      '[[handoff:é]] [[handoff:tester]]',
    ]) {
      agrees(signals, content);
    }
  });

  it('is exact on bracketed signals longer than the span window (searched, not walked)', () => {
    const long = `[${'a'.repeat(250)}]`;
    const upper = long.toUpperCase();
    agrees([long, '[A]'], `x ${upper} y`);
    agrees([long], `x ${long.slice(0, -1)} y`);
  });

  it('relies on facts about lowercasing that hold for every code point', () => {
    const longer: number[] = [];
    const toAscii: number[] = [];
    for (let c = 0; c <= 0x10ffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const s = String.fromCodePoint(c);
      const l = s.toLowerCase();
      if (l.length !== s.length) longer.push(c);
      if (c >= 0x80 && /[\0-\x7f]/.test(l)) toAscii.push(c);
      if (c < 0x80 && l !== (c >= 0x41 && c <= 0x5a ? String.fromCharCode(c + 0x20) : s)) toAscii.push(c);
    }
    expect(longer).toEqual([0x130]);
    expect('\u0130'.toLowerCase()).toBe('i\u0307');
    expect(toAscii).toEqual([0x130, 0x212a]); // to "i" + U+0307 and "k": letters, never anchors
  });

  const UNITS = [
    '[',
    ']',
    ':',
    '#',
    'a',
    'A',
    'b',
    'k',
    'K',
    '\u212a',
    'İ',
    'i',
    '\u0307',
    'Σ',
    'σ',
    'ς',
    'é',
    'E\u0301',
    ' ',
    '😀',
  ];
  // Most replies without U+0130, so the in-place comparison (the common case) is exercised too.
  const PLAIN = UNITS.filter((u) => u !== 'İ');
  const text = (maxLength: number) =>
    fc
      .oneof({ weight: 3, arbitrary: fc.constant(PLAIN) }, { weight: 1, arbitrary: fc.constant(UNITS) })
      .chain((units) => fc.array(fc.constantFrom(...units), { maxLength }))
      .map((parts) => parts.join(''));
  const ASCII = UNITS.filter((u) => u.charCodeAt(0) < 0x80);
  const signal = fc.oneof(
    text(6),
    fc.array(fc.constantFrom(...ASCII), { maxLength: 6 }).map((parts) => parts.join('')),
  );
  const OTHER = ['\u212a', 'é', 'Σ', 'İ', '😀'];

  it('agrees with signalMatches on anchored signals over a small tricky alphabet', () => {
    fc.assert(
      fc.property(fc.array(signal, { minLength: 1, maxLength: 8 }), text(60), (signals, content) => {
        agrees(signals, content);
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees with signalMatches when the reply is made of the signals themselves, recased', () => {
    fc.assert(
      fc.property(
        fc.array(signal, { minLength: 1, maxLength: 8 }),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom('same', 'upper', 'lower', 'cut', 'swap')), { maxLength: 6 }),
        text(6),
        (signals, picks, glue) => {
          const content = picks
            .map(([n, how]) => {
              const s = signals[n % signals.length] as string;
              if (how === 'upper') return s.toUpperCase();
              if (how === 'lower') return s.toLowerCase();
              if (how === 'cut') return s.slice(1);
              if (how === 'swap' && s !== '') {
                const at = n % s.length;
                return s.slice(0, at) + (OTHER[n % OTHER.length] as string) + s.slice(at + 1);
              }
              return s;
            })
            .join(glue);
          agrees(signals, content);
        },
      ),
      { numRuns: 3000 },
    );
  });

  // That these take time linear in the reply (the comparisons give up on a budget) is measured
  // by `pnpm bench crew` (bench/growth.bench.ts), not asserted here.
  it('matches replies made of anchor characters', () => {
    const signals = ['::::::::x', '[[[[[[[[y]', '#'.repeat(40) + 'z', '[DONE]'];
    const m = new SignalMatcher(signals);
    for (const make of [
      (n: number) => ':'.repeat(n),
      (n: number) => '['.repeat(n) + ']',
      (n: number) => '#:['.repeat(n),
    ]) {
      expect(m.matchAll(make(1000))).toEqual(expected(signals, make(1000)));
    }
  });
});

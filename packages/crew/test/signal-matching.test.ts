import { describe, expect, expectTypeOf, it } from 'vitest';
import fc from 'fast-check';
import { isSignalyardError } from '@signalyard/core';
import { SignalMatcher, isValidSignal, matchLevel, signalMatches } from '@signalyard/crew';
import type { MatchLevel } from '@signalyard/crew';

/** The contract's level-3 rule, written as literally as possible (a regex is fine in a test oracle). */
function referenceLevel(signal: string, content: string): MatchLevel | undefined {
  if (signal === '') return undefined;
  if (content.includes(signal)) return 'exact';
  if (content.toLowerCase().includes(signal.toLowerCase())) return 'case_insensitive';
  if (!/^\[[^[\]]*\]$/.test(signal)) return undefined;
  const norm = (span: string): string => {
    const t = span.normalize('NFC').toLowerCase();
    return `[${t.slice(1, -1).replace(/\s+/g, ' ').trim()}]`;
  };
  const key = norm(signal);
  for (let i = 0; i < content.length; i++) {
    if (content[i] !== '[') continue;
    const j = content.indexOf(']', i);
    if (j !== -1 && j - i + 1 <= 200 && norm(content.slice(i, j + 1)) === key) return 'normalized';
  }
  return undefined;
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isSignalyardError(error) ? error.code : `not a SignalyardError: ${String(error)}`;
  }
  return undefined;
}

const NFD_TEXT = '[ KẾT  THÚC  THI ]'.normalize('NFD');

describe('matchLevel: the contract table', () => {
  const table: [string, string, MatchLevel | undefined][] = [
    ['[ROUTE_EXECUTOR]', 'call the executor [ROUTE_EXECUTOR]', 'exact'],
    ['[ROUTE_EXECUTOR]', 'x [route_executor] y', 'case_insensitive'],
    ['[ROUTE_EXECUTOR]', '[  ROUTE_EXECUTOR  ]', 'normalized'],
    ['[ROUTE_EXECUTOR]', 'Let me route to [ Route_Executor ] please', 'normalized'],
    ['[ROUTE_EXECUTOR]', 'The decision is [ ROUTE  EXECUTOR ]', undefined],
    ['[KẾT THÚC THI]', '[ KẾT  THÚC  THI ]', 'normalized'],
    ['[DONE]', '[DONE_EXAM]', undefined],
  ];
  it.each(table)('%s in %j → %s', (signal, content, level) => {
    expect(matchLevel(signal, content)).toBe(level);
    expect(signalMatches(signal, content)).toBe(level !== undefined);
  });

  it('matches the Vietnamese signal against the same text in decomposed Unicode (NFD)', () => {
    expect(NFD_TEXT).not.toBe('[ KẾT  THÚC  THI ]');
    expect(NFD_TEXT.normalize('NFC')).toBe('[ KẾT  THÚC  THI ]');
    expect(signalMatches('[KẾT THÚC THI]', NFD_TEXT)).toBe(true);
    expect(matchLevel('[KẾT THÚC THI]', NFD_TEXT)).toBe('normalized');
    // The exact signal text in NFD, and an NFD signal against NFC text, match as well.
    expect(signalMatches('[KẾT THÚC THI]', '[KẾT THÚC THI]'.normalize('NFD'))).toBe(true);
    expect(signalMatches('[KẾT THÚC THI]'.normalize('NFD'), 'so [kết thúc thi]')).toBe(true);
  });

  it('does not treat underscore as whitespace, in either direction', () => {
    expect(signalMatches('[ROUTE EXECUTOR]', '[ROUTE_EXECUTOR]')).toBe(false);
    expect(signalMatches('[ROUTE_EXECUTOR]', '[ ROUTE EXECUTOR ]')).toBe(false);
  });
});

describe('matchLevel: levels', () => {
  it('reports the first level that hits', () => {
    expect(matchLevel('[A]', '[A] and [a] and [ a ]')).toBe('exact');
    expect(matchLevel('[A]', '[a] and [ a ]')).toBe('case_insensitive');
    expect(matchLevel('[A]', '[ a ]')).toBe('normalized');
  });

  it('lowercases with Unicode rules, not just ASCII', () => {
    expect(matchLevel('[ÉTÉ]', 'it is [été]')).toBe('case_insensitive');
    expect(matchLevel('[ΣΟΦΙΑ]', '[σοφια]')).toBe('case_insensitive');
    expect(matchLevel('[done]', 'DONE? [DONE]')).toBe('case_insensitive'); // only the reply changes
  });

  it('applies levels 1–2 to any signal, level 3 only to bracketed ones without inner brackets', () => {
    expect(matchLevel('done', 'all DONE')).toBe('case_insensitive');
    expect(matchLevel('DONE', '[ done ]')).toBe('case_insensitive');
    expect(matchLevel('done now', 'done  now')).toBeUndefined();
    expect(matchLevel('[[handoff:coder]]', 'go [[handoff:coder]]')).toBe('exact');
    expect(matchLevel('[[handoff:coder]]', 'go [[ handoff:coder ]]')).toBeUndefined();
    expect(matchLevel('[a]b]', '[ a]b]')).toBeUndefined();
  });

  it('normalises every kind of JavaScript whitespace, and only those', () => {
    for (const ws of [
      '\t',
      '\n',
      '\v',
      '\f',
      '\r',
      ' ',
      '\u00a0',
      '\u1680',
      '\u2000',
      '\u200a',
      '\u2028',
      '\u2029',
      '\u202f',
      '\u205f',
      '\u3000',
      '\ufeff',
    ]) {
      expect(matchLevel('[READY TO GO]', `[${ws}ready${ws}${ws}to${ws}go${ws}]`), JSON.stringify(ws)).toBe(
        'normalized',
      );
    }
    for (const notWs of ['\u200b', '\u180e', '_', '-', '\u0085']) {
      expect(matchLevel('[READY TO GO]', `[ready${notWs}to go]`), JSON.stringify(notWs)).toBeUndefined();
    }
  });

  it('treats as whitespace exactly the UTF-16 code units JavaScript \\s matches', () => {
    const mismatches: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const c = String.fromCharCode(code);
      if ((matchLevel('[A B]', `[a${c}b]`) !== undefined) !== /\s/.test(c)) mismatches.push(code.toString(16));
    }
    expect(mismatches).toEqual([]);
  });

  it('takes each [ up to the first following ], so a ] inside the span ends it', () => {
    expect(matchLevel('[DONE]', '[ done ] ]')).toBe('normalized');
    expect(matchLevel('[DONE]', '[[ done ]')).toBe('normalized'); // the inner [ starts its own span
    expect(matchLevel('[DONE]', '[ do ] ne ]')).toBeUndefined();
    expect(matchLevel('[DONE]', '] done [')).toBeUndefined();
    expect(matchLevel('[DONE]', '[ done')).toBeUndefined();
  });

  it('the empty signal never matches', () => {
    expect(matchLevel('', '')).toBeUndefined();
    expect(matchLevel('', 'anything')).toBeUndefined();
    expect(signalMatches('', '[]')).toBe(false);
  });

  it('empty content matches nothing', () => {
    expect(matchLevel('[DONE]', '')).toBeUndefined();
  });

  it('bad input is a typed error, never a TypeError', () => {
    expect(codeOf(() => matchLevel(42 as unknown as string, 'x'))).toBe('CREW_SIGNAL_INVALID');
    expect(codeOf(() => signalMatches(null as unknown as string, 'x'))).toBe('CREW_SIGNAL_INVALID');
    expect(codeOf(() => matchLevel('[A]', undefined as unknown as string))).toBe('CREW_CONTENT_INVALID');
    expect(codeOf(() => signalMatches('[A]', { content: '[A]' } as unknown as string))).toBe('CREW_CONTENT_INVALID');
  });

  it('has the contract types', () => {
    expectTypeOf(matchLevel).returns.toEqualTypeOf<'exact' | 'case_insensitive' | 'normalized' | undefined>();
    expectTypeOf(signalMatches).toEqualTypeOf<(signal: string, content: string) => boolean>();
  });
});

describe('the 200-unit bracket window', () => {
  // "[ " + n×"a" + "]" is n + 3 code units long.
  const span = (n: number): string => `[ ${'a'.repeat(n)}]`;
  const signal = (n: number): string => `[${'A'.repeat(n)}]`;

  it('matches a span of exactly 200 code units and not one of 201', () => {
    expect(span(197)).toHaveLength(200);
    expect(matchLevel(signal(197), `x ${span(197)} y`)).toBe('normalized');
    expect(span(198)).toHaveLength(201);
    expect(matchLevel(signal(198), `x ${span(198)} y`)).toBeUndefined();
  });

  it('measures the raw content, before whitespace collapsing', () => {
    const padded = `[${' '.repeat(150)}done${' '.repeat(47)}]`; // 203 units, normalises to [done]
    expect(padded).toHaveLength(203);
    expect(matchLevel('[DONE]', padded)).toBeUndefined();
    expect(matchLevel('[DONE]', `[${' '.repeat(150)}done${' '.repeat(44)}]`)).toBe('normalized'); // 200
  });

  it('measures the raw content, before NFC composition', () => {
    const word = 'é'.repeat(99); // 99 units in NFC, 198 in NFD
    const nfd = `[ ${word}]`.normalize('NFD'); // 201 raw units, 102 after NFC
    expect(nfd).toHaveLength(201);
    expect(matchLevel(`[${word.toUpperCase()}]`, nfd)).toBeUndefined();
    const shorter = `[ ${'é'.repeat(98)}]`.normalize('NFD'); // 199 raw units
    expect(matchLevel(`[${'É'.repeat(98)}]`, shorter)).toBe('normalized');
  });

  it('only limits level 3: longer signals still match exactly or case-insensitively', () => {
    expect(matchLevel(signal(500), `x ${signal(500)}`)).toBe('exact');
    expect(matchLevel(signal(500), `x ${signal(500).toLowerCase()}`)).toBe('case_insensitive');
  });
});

describe('isValidSignal', () => {
  it.each(['[END]', '[A]', '[END_EXAM]', '[READY TO GO]', '[KẾT THÚC]', '[BÁO_CÁO_XONG]', '[ padded ]'])(
    'accepts %j',
    (s) => {
      expect(isValidSignal(s)).toBe(true);
    },
  );
  it.each([
    'END]',
    '[END',
    'END',
    '[]',
    '[ ]',
    '[',
    ']',
    '',
    '[\t\n]',
    '[a[b]',
    '[a]b]',
    '[[END]]',
    ' [END]',
    '[END] ',
  ])('rejects %j', (s) => {
    expect(isValidSignal(s)).toBe(false);
  });
  it('rejects anything that is not a string, without throwing', () => {
    for (const v of [undefined, null, 42, ['[A]'], { signal: '[A]' }])
      expect(isValidSignal(v as unknown as string)).toBe(false);
  });
});

// ------------------------------------------------------------------------------- properties

const UNITS = [
  '[',
  ']',
  '[',
  ']',
  ' ',
  '  ',
  '\t',
  '\n',
  '\u00a0',
  '\u3000',
  '\ufeff',
  '\u2028',
  '_',
  'a',
  'A',
  'b',
  'B',
  'é',
  'É',
  'e\u0301',
  'E\u0301',
  '\u0301',
  'İ',
  'ı',
  'K',
  '\u212a',
  'ß',
  'ẞ',
  'Σ',
  'σ',
  'ς',
  'ế',
  'Ế',
  'Å',
  '\u212b',
  '\ud800',
  '\udc00',
  '😀',
];
const unit = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...UNITS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 2 }) },
);
const text = (maxLength: number) => fc.array(unit, { maxLength }).map((parts) => parts.join(''));
const bracketed = text(8).map((inner) => `[${inner.replace(/[[\]]/g, '')}]`);
const anySignal = fc.oneof(
  bracketed,
  text(6).filter((s) => s !== ''),
);

/** Rewrites words with random case, NFC/NFD and whitespace runs: content that ought to hit level 3. */
const WORDS = ['route', 'EXECUTOR', 'Kết', 'THÚC', 'a_b', 'İstanbul', 'straße', 'ΣΟΦΊΑ', 'x'];
const nearMiss = fc
  .record({
    words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
    seps: fc.array(fc.constantFrom(' ', '  ', '\t', '\n ', '\u00a0', '_', ''), { minLength: 6, maxLength: 6 }),
    upper: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    form: fc.constantFrom('NFC', 'NFD', 'NFKC'),
    before: text(10),
    after: text(10),
  })
  .map(({ words, seps, upper, form, before, after }) => {
    const signal = `[${words.join(' ')}]`;
    const body = words.map((w, i) => (upper[i] === true ? w.toUpperCase() : w.toLowerCase())).join(seps[1]);
    const content = `${before}[${seps[0]}${body}${seps[2]}]${after}`.normalize(form);
    return { signal, content };
  });

describe('matching properties', () => {
  it('matchLevel agrees with the literal reading of the contract on arbitrary unicode', () => {
    fc.assert(
      fc.property(anySignal, text(40), (signal, content) => {
        expect(matchLevel(signal, content)).toBe(referenceLevel(signal, content));
      }),
      { numRuns: 3000 },
    );
  });

  it('matchLevel agrees with the reference on near-miss spellings of bracketed signals', () => {
    let normalized = 0;
    fc.assert(
      fc.property(nearMiss, ({ signal, content }) => {
        const level = matchLevel(signal, content);
        if (level === 'normalized') normalized++;
        expect(level).toBe(referenceLevel(signal, content));
      }),
      { numRuns: 2000 },
    );
    expect(normalized).toBeGreaterThan(100); // the generator does exercise level 3
  });

  it('signalMatches and SignalMatcher agree on every signal of a list, and never throw', () => {
    fc.assert(
      fc.property(
        fc.array(anySignal, { maxLength: 6 }),
        fc.oneof(
          text(40),
          nearMiss.map((n) => n.content),
        ),
        (signals, content) => {
          const matcher = new SignalMatcher(signals);
          const expected = signals.flatMap((s, i) => (signalMatches(s, content) ? [i] : []));
          expect(matcher.matchAll(content)).toEqual(expected);
          expect(matcher.first(content)).toBe(expected[0]);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('never throws on arbitrary full-range strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(typeof signalMatches(a, b)).toBe('boolean');
        expect(typeof isValidSignal(a)).toBe('boolean');
        if (a !== '') new SignalMatcher([a]).matchAll(b);
      }),
      { numRuns: 2000 },
    );
  });
});

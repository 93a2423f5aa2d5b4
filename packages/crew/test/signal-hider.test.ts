import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SignalMatcher, signalMatches } from '@signalyard/crew';
import { SignalHider, visibleText } from '../src/signal-hider.js';

// The crew's signals in these tests: plain, with a space inside, non-ASCII, and one of exactly
// 200 code units (the longest a crew may configure: the hold-back window's edge).
const LONG = `[${'L'.repeat(198)}]`;
const SIGNALS = ['[DONE]', '[ROUTE_EXECUTOR]', '[ASK STUDENT]', '[KẾT THÚC THI]', LONG];
const markers = new SignalMatcher(SIGNALS);

/**
 * The visible text exactly as defined, written independently of the hider: find every marker
 * span of the raw text (a `[` up to the next bracket, which must be `]`, at most 200 code units,
 * matched by some signal at any level), cut each together with the whitespace run right before
 * it, in one pass, then trim.
 */
function reference(raw: string, signals: readonly string[] = SIGNALS): string {
  let out = '';
  let at = 0;
  for (let i = raw.indexOf('['); i !== -1; i = raw.indexOf('[', i + 1)) {
    let j = i + 1;
    while (j < raw.length && raw[j] !== '[' && raw[j] !== ']') j++;
    if (raw[j] !== ']') continue;
    const span = raw.slice(i, j + 1);
    if (span.length > 200 || !signals.some((s) => signalMatches(s, span))) continue;
    let start = i;
    while (start > at && /\s/.test(raw[start - 1] as string)) start--;
    out += raw.slice(at, start);
    at = j + 1;
  }
  return (out + raw.slice(at)).trim();
}

/** The deltas a hider releases for `chunks`, the end included (empty releases left out). */
function run(chunks: readonly string[]): string[] {
  const hider = new SignalHider(markers);
  const out = chunks.map((c) => hider.push(c));
  out.push(hider.end());
  return out.filter((d) => d !== '');
}

/** `text` cut at `cuts` (positions, any order, duplicates allowed). */
function chunked(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const c of at) {
    chunks.push(text.slice(from, c));
    from = c;
  }
  chunks.push(text.slice(from));
  return chunks;
}

/** `text` one UTF-16 code unit per chunk (surrogate pairs split too). */
const oneByOne = (text: string): string[] => Array.from({ length: text.length }, (_, i) => text.charAt(i));

describe('visible text: the definition', () => {
  it.each([
    ['a marker and the whitespace before it go', 'Over to you [DONE]', 'Over to you'],
    ['text after a marker stays, joined without the removed whitespace', 'a [DONE] b', 'a b'],
    ['whitespace after a marker is not removed with it', 'a [DONE]   b', 'a   b'],
    ['no whitespace before: the marker alone goes', 'a[DONE]b', 'ab'],
    ['the result is trimmed at both ends', '  [DONE]  hello \n', 'hello'],
    ['every level hides: case-insensitive', 'x [done] y', 'x y'],
    ['every level hides: normalised', 'x [  Ask   student ] y', 'x y'],
    ['every level hides: another Unicode form', 'Xong. [KẾT THÚC THI]'.normalize('NFD'), 'Xong.'],
    ['a near miss stays', 'see [DONE_EXAM] and [ ROUTE EXECUTOR ]', 'see [DONE_EXAM] and [ ROUTE EXECUTOR ]'],
    ['one pass: a marker cut out of another is not removed again', '[DO[DONE]NE]', '[DONE]'],
    ['an unclosed bracket stays', 'a [DONE b', 'a [DONE b'],
    ['the whitespace before a marker inside an unclosed span goes', 'a [b [DONE]', 'a [b'],
    ['a marker of exactly 200 code units goes', `x ${LONG} y`, 'x y'],
    ['two markers in a row go, each with its whitespace', 'a [DONE]\n\t[ROUTE_EXECUTOR] b', 'a b'],
    ['only markers: nothing is visible', ' [DONE] [done] ', ''],
  ])('%s', (_name, raw, visible) => {
    expect(reference(raw)).toBe(visible);
    expect(visibleText(raw, markers)).toBe(visible);
  });

  it('a span over 200 code units is no marker, even when a signal would match it', () => {
    const raw = `a [${' '.repeat(200)}DONE]`;
    expect(signalMatches('[DONE]', raw)).toBe(false); // level 3 looks no further either
    expect(visibleText(raw, markers)).toBe(raw);
    const raw2 = `a ${LONG.slice(0, -1)}L]`; // 201 code units: the long signal's text, one more L
    expect(visibleText(raw2, markers)).toBe(raw2);
  });

  it('a crew without signals only trims', () => {
    expect(visibleText('  [DONE] as text \n', undefined)).toBe('[DONE] as text');
    const hider = new SignalHider(undefined);
    const released = oneByOne('  [DONE] as text \n').map((c) => hider.push(c));
    expect(released.join('') + hider.end()).toBe('[DONE] as text');
  });
});

describe('SignalHider: holding back', () => {
  it('holds a possible marker until it closes, then drops it', () => {
    const hider = new SignalHider(markers);
    expect(hider.push('Over to you [RO')).toBe('Over to you');
    expect(hider.push('UTE_EXEC')).toBe('');
    expect(hider.push('UTOR] now')).toBe(' now');
    expect(hider.end()).toBe('');
  });

  it('releases held text once it cannot be a marker: a span that closes as no marker', () => {
    const hider = new SignalHider(markers);
    expect(hider.push('see [DONE_')).toBe('see');
    expect(hider.push('EXAM] ok')).toBe(' [DONE_EXAM] ok');
  });

  it('releases held text when another [ starts, and holds the new span', () => {
    const hider = new SignalHider(markers);
    expect(hider.push('[a b [DO')).toBe('[a b');
    expect(hider.push('NE] c')).toBe(' c');
  });

  it('releases a span once it passes 200 code units without closing', () => {
    const hider = new SignalHider(markers);
    const long = `[${'x'.repeat(198)}`;
    expect(hider.push(long)).toBe(''); // 199 code units: a ] would still make a marker-sized span
    expect(hider.push('x')).toBe(`${long}x`); // 200: too long to be one
    expect(hider.push(']')).toBe(']');
  });

  it('holds whitespace until the next non-whitespace character, and drops it at the end', () => {
    const hider = new SignalHider(markers);
    expect(hider.push('hello ')).toBe('hello');
    expect(hider.push(' \n')).toBe('');
    expect(hider.push('world')).toBe('  \nworld');
    expect(hider.push('  ')).toBe('');
    expect(hider.end()).toBe('');
  });

  it('drops leading whitespace, and releases an unclosed span at the end', () => {
    const hider = new SignalHider(markers);
    expect(hider.push('  \n')).toBe('');
    expect(hider.push('[DON')).toBe('');
    expect(hider.end()).toBe('[DON');
  });

  it('never lets a marker split into single code units through', () => {
    const deltas = run(oneByOne('Q1 [ROUTE_EXECUTOR] then [ KẾT  THÚC THI ] 🎉'));
    expect(deltas.join('')).toBe('Q1 then 🎉');
    for (const d of deltas) expect(d).not.toMatch(/[[\]]/);
  });
});

// ------------------------------------------------------------------------------- properties

/** Pieces replies are made of: markers in every form, near misses, stray brackets, whitespace, text. */
const markerPiece = fc.constantFrom(
  '[DONE]',
  '[done]',
  '[ Done ]',
  '[ROUTE_EXECUTOR]',
  '[route_executor]',
  '[  ASK\tSTUDENT ]',
  '[ask student]',
  '[KẾT THÚC THI]',
  '[ KẾT  THÚC  THI ]'.normalize('NFD'),
  LONG,
  LONG.toLowerCase(),
);
const nearMissPiece = fc.constantFrom('[DONE_EXAM]', '[ ROUTE EXECUTOR ]', '[D O N E]', `[${'L'.repeat(199)}]`, '[]');
const strayPiece = fc.constantFrom('[', ']', '[DO', 'NE]', '[[', ']]', '[ ');
const spacePiece = fc.constantFrom(' ', '  ', '\n', '\t', '\u00a0', ' \n ', '\u3000');
const wordPiece = fc.oneof(
  fc.constantFrom('Hà Nội', 'ok', '42.', '🎉', 'x', 'ẾT'),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
);

const reply = fc
  .array(fc.oneof(markerPiece, nearMissPiece, strayPiece, spacePiece, wordPiece), { maxLength: 14 })
  .map((pieces) => pieces.join(''));
/** Replies whose only brackets are whole spans: no marker can appear once others are cut out. */
const cleanReply = fc
  .array(
    fc.oneof(
      markerPiece,
      nearMissPiece,
      spacePiece,
      wordPiece.map((w) => w.replace(/[[\]]/g, '')),
    ),
    { maxLength: 14 },
  )
  .map((pieces) => pieces.join(''));
const cuts = fc.array(fc.nat(), { maxLength: 30 });

describe('SignalHider: properties', () => {
  it('for any reply and any chunking, the released text equals the visible text as defined', () => {
    fc.assert(
      fc.property(reply, cuts, (raw, at) => {
        const want = reference(raw);
        expect(run(chunked(raw, at)).join('')).toBe(want);
        expect(run(oneByOne(raw)).join('')).toBe(want);
        expect(visibleText(raw, markers)).toBe(want);
      }),
      { numRuns: 2000 },
    );
  });

  it('arbitrary text, arbitrary chunking: the same (no bracket or whitespace shape breaks it)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('[', ']', ' ', 'D', 'O', 'N', 'E', 'd', '\n', 'x') }),
        cuts,
        (raw, at) => {
          expect(run(chunked(raw, at)).join('')).toBe(reference(raw));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('no prefix of the released text ever shows a configured marker (replies without stray brackets)', () => {
    fc.assert(
      fc.property(cleanReply, cuts, (raw, at) => {
        let shown = '';
        for (const delta of run(chunked(raw, at))) {
          shown += delta;
          expect(markers.first(shown)).toBeUndefined();
        }
      }),
      { numRuns: 2000 },
    );
  });
});

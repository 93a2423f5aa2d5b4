// Internal building blocks of signal matching, shared by `matchLevel` and `SignalMatcher` so the
// two can never disagree. Nothing here runs a regular expression over model output: every pass
// is a native string search (`includes`, `indexOf`, `lastIndexOf`) or a plain loop.
import { describeValue } from '@signalyard/core';
import { CrewArgumentError } from './errors/crew-argument-error.js';

/**
 * The longest bracket span (brackets included, raw UTF-16 code units) level 3 looks at; also the
 * longest signal a crew may configure, so the stream's hold-back window covers a whole marker.
 */
export const BRACKET_WINDOW = 200;

const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]

/**
 * True for exactly the code units JavaScript's `\s` matches (WhiteSpace and LineTerminator:
 * tab, LF, VT, FF, CR, space, NBSP, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F,
 * U+3000, U+FEFF).
 */
export function isJsWhitespace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * True when `signal` takes part in level 3: it starts with `[`, ends with `]`, and has no
 * other `[` or `]` in between. (`isValidSignal` additionally wants a non-blank inside.)
 */
export function isBracketedSignal(signal: string): boolean {
  const last = signal.length - 1;
  if (last < 1 || signal.charCodeAt(0) !== OPEN || signal.charCodeAt(last) !== CLOSE) return false;
  return !signal.includes('[', 1) && signal.indexOf(']', 1) === last;
}

/**
 * Normalises a bracketed span (`[` … `]`, no inner `]`): Unicode NFC, then lowercase, then trim
 * inside the brackets and collapse every run of `\s` whitespace to one space. One linear pass
 * after the two native conversions; returns `span` itself when nothing changes.
 */
export function normalizeBracketSpan(span: string): string {
  // NFC and lowercasing never create or remove a bracket, so `s` is still `[` … `]`.
  // ASCII text is already in NFC: skip the (comparatively costly) normalize call for it.
  let ascii = true;
  for (let i = 1; i < span.length - 1; i++) {
    if (span.charCodeAt(i) >= 0x80) {
      ascii = false;
      break;
    }
  }
  const s = (ascii ? span : span.normalize('NFC')).toLowerCase();
  const end = s.length - 1; // index of the closing bracket
  let out = '';
  let changed = s !== span;
  let runStart = 1; // start of the pending run of kept text
  let i = 1;
  while (i < end && isJsWhitespace(s.charCodeAt(i))) i++;
  if (i !== 1) {
    changed = true;
    runStart = i;
  }
  while (i < end) {
    if (!isJsWhitespace(s.charCodeAt(i))) {
      i++;
      continue;
    }
    const wsStart = i;
    while (i < end && isJsWhitespace(s.charCodeAt(i))) i++;
    if (i === end) {
      // trailing whitespace: drop it
      out += s.slice(runStart, wsStart);
      runStart = end;
      changed = true;
      break;
    }
    if (i - wsStart === 1 && s.charCodeAt(wsStart) === 0x20) continue; // already one space
    out += s.slice(runStart, wsStart) + ' ';
    runStart = i;
    changed = true;
  }
  if (!changed) return span;
  return '[' + out + s.slice(runStart, end) + ']';
}

/**
 * Calls `visit(key)` with the normalised form of every bracket span of `content` that level 3
 * can match, left to right, until `visit` returns `true`; returns whether it did.
 *
 * The rule is "for every `[`, the text up to the first following `]`, when that span
 * is at most {@link BRACKET_WINDOW} code units". Spans that contain another `[` can never equal
 * a level-3 signal (those have no inner bracket, and normalisation neither adds nor removes
 * brackets), so for each `]` only the span from the last `[` before it is normalised. Each code
 * unit is visited a bounded number of times: `indexOf(']')` scans forward from a `[`,
 * `lastIndexOf('[')` scans back at most to that same `[`, and the next search resumes after the
 * `]`. Hence `[[[[…` (no `]`), `[[[…]` and random text are all linear in `content.length`.
 */
export function forEachBracketSpan(content: string, visit: (key: string) => boolean): boolean {
  return walkBracketSpans(content, (start, close) => visit(normalizeBracketSpan(content.slice(start, close + 1))));
}

/**
 * The walk behind {@link forEachBracketSpan}: calls `visit(start, close)` with the bounds
 * (indexes of the `[` and of the `]`) of every bracket span of `content` without an inner
 * bracket and at most {@link BRACKET_WINDOW} code units long, left to right, until `visit`
 * returns `true`; returns whether it did. Spans never overlap.
 */
export function walkBracketSpans(content: string, visit: (start: number, close: number) => boolean): boolean {
  let open = content.indexOf('[');
  while (open !== -1) {
    const close = content.indexOf(']', open + 1);
    if (close === -1) return false;
    const start = content.lastIndexOf('[', close - 1); // >= open
    if (close - start < BRACKET_WINDOW && visit(start, close)) return true;
    open = content.indexOf('[', close + 1);
  }
  return false;
}

/** The typed error for a signal that is not a non-empty string (code `CREW_SIGNAL_INVALID`). */
export function invalidSignalError(signal: unknown, where: string): CrewArgumentError {
  return new CrewArgumentError({
    code: 'CREW_SIGNAL_INVALID',
    message: `Invalid signal ${describeValue(signal)} ${where}: expected a non-empty string such as "[DONE]"`,
    value: signal,
  });
}

/** Throws the typed error for content that is not a string. */
export function assertContent(content: unknown): asserts content is string {
  if (typeof content !== 'string') {
    throw new CrewArgumentError({
      code: 'CREW_CONTENT_INVALID',
      message: `Invalid reply content ${describeValue(content)}: expected a string`,
      value: content,
    });
  }
}

import {
  assertContent,
  forEachBracketSpan,
  isBracketedSignal,
  invalidSignalError,
  isJsWhitespace,
  normalizeBracketSpan,
} from './signal-normalize.js';

/**
 * How a signal matched a reply, the first level that hit:
 *
 * - `'exact'`: the reply contains the signal as a substring;
 * - `'case_insensitive'`: the same after Unicode lowercasing both;
 * - `'normalized'`: a bracket span of the reply equals the (bracketed) signal after NFC,
 *   lowercasing, trimming inside the brackets and collapsing whitespace runs.
 */
export type MatchLevel = 'exact' | 'case_insensitive' | 'normalized';

/**
 * The level at which `signal` matches `content`, or `undefined` when it does not match.
 *
 * Levels are tried in order, first hit wins:
 * 1. **exact** — `content` contains `signal`;
 * 2. **case_insensitive** — the same after `toLowerCase()` of both (skipped when lowercasing
 *    changes neither side);
 * 3. **normalized** — only for a bracketed signal (`[` … `]`, no other bracket inside): some
 *    `[` of `content`, with the text up to the first following `]`, spans at most 200 UTF-16
 *    code units and equals the signal once both are normalised (Unicode NFC, lowercase, trim
 *    inside the brackets, collapse runs of JavaScript `\s` whitespace to one space). Underscore
 *    is not whitespace.
 *
 * The empty signal never matches. Linear in `content.length`, with no regular expression over
 * `content`. For many signals against the same replies, compile a {@link SignalMatcher}.
 *
 * @throws CrewArgumentError `CREW_SIGNAL_INVALID` when `signal` is not a string,
 * `CREW_CONTENT_INVALID` when `content` is not a string.
 *
 * @example
 * ```ts
 * matchLevel('[ROUTE_EXECUTOR]', 'call the executor [ROUTE_EXECUTOR]');  // 'exact'
 * matchLevel('[ROUTE_EXECUTOR]', 'x [route_executor] y');                 // 'case_insensitive'
 * matchLevel('[ROUTE_EXECUTOR]', 'Let me route to [ Route_Executor ] please'); // 'normalized'
 * matchLevel('[ROUTE_EXECUTOR]', 'The decision is [ ROUTE  EXECUTOR ]');  // undefined
 * ```
 */
export function matchLevel(signal: string, content: string): MatchLevel | undefined {
  if (typeof signal !== 'string') throw invalidSignalError(signal, 'given to matchLevel');
  assertContent(content);
  if (signal === '') return undefined;
  if (content.includes(signal)) return 'exact';
  const lowerSignal = signal.toLowerCase();
  const lowerContent = content.toLowerCase();
  if ((lowerSignal !== signal || lowerContent !== content) && lowerContent.includes(lowerSignal)) {
    return 'case_insensitive';
  }
  if (!isBracketedSignal(signal)) return undefined;
  const key = normalizeBracketSpan(signal);
  return forEachBracketSpan(content, (span) => span === key) ? 'normalized' : undefined;
}

/**
 * True when `signal` matches `content` at any level of {@link matchLevel}.
 *
 * @throws CrewArgumentError `CREW_SIGNAL_INVALID` / `CREW_CONTENT_INVALID` for non-string input.
 *
 * @example
 * ```ts
 * signalMatches('[DONE]', 'all good [ done ]');   // true
 * signalMatches('[DONE]', '[DONE_EXAM]');         // false
 * signalMatches('', 'anything');                  // false: the empty signal never matches
 * ```
 */
export function signalMatches(signal: string, content: string): boolean {
  return matchLevel(signal, content) !== undefined;
}

/**
 * True when `signal` has the format crew.yaml requires: it starts with `[`, ends with `]`, has
 * no other `[` or `]` inside, and at least one non-whitespace character inside.
 *
 * Valid: `[END]`, `[A]`, `[END_EXAM]`, `[READY TO GO]`, `[KẾT THÚC]`, `[BÁO_CÁO_XONG]`.
 * Invalid: `END]`, `[END`, `END`, `[]`, `[ ]`, `[`, `]`, `''` — and anything that is not a string.
 *
 * `SignalMatcher` and {@link matchLevel} accept any non-empty string; this is the stricter rule
 * the crew configuration enforces.
 *
 * @example
 * ```ts
 * isValidSignal('[READY TO GO]');  // true
 * isValidSignal('[ ]');            // false
 * ```
 */
export function isValidSignal(signal: string): boolean {
  if (typeof signal !== 'string' || !isBracketedSignal(signal)) return false;
  for (let i = 1; i < signal.length - 1; i++) if (!isJsWhitespace(signal.charCodeAt(i))) return true;
  return false;
}

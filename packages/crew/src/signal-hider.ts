// The visible text of a reply, computed incrementally from its deltas. A reply's visible text is
// its content with every marker span removed together with the run of whitespace right before
// it, then trimmed at both ends. A marker span is a `[` … `]` bracket span (no other bracket
// inside, at most BRACKET_WINDOW code units) that some signal of the crew matches at any level.
// One pass over the raw text: what only becomes a marker once another marker is cut out of it
// (`[DO[DONE]NE]`) stays.
import { BRACKET_WINDOW, isJsWhitespace } from './signal-normalize.js';
import type { SignalMatcher } from './signal-matcher.js';

/**
 * Holds back, per reply, what a later delta may still hide: text from an unmatched `[` until the
 * span closes, another `[` starts, or it grows past {@link BRACKET_WINDOW} (then it is released,
 * or dropped when it closed as a marker), and whitespace until the next non-whitespace character
 * shows whether a marker follows. `push` returns the text each delta releases; `end` what the
 * end of the reply releases. The concatenation equals {@link visibleText} of the whole reply,
 * however it is chunked. One instance per reply; never reused.
 * @internal
 */
export class SignalHider {
  /** The crew's signals; `undefined` when it has none (then only whitespace is held back). */
  readonly #markers: SignalMatcher | undefined;
  /** Whether visible text has been released (leading whitespace is trimmed until then). */
  #started = false;
  /** The run of whitespace after the last released non-whitespace character. */
  #space = '';
  /** The bracket span being held: from an unmatched `[`, no bracket after it; `''` when none. */
  #open = '';
  /** What the current `push` / `end` releases. */
  #out = '';

  constructor(markers: SignalMatcher | undefined) {
    this.#markers = markers;
  }

  /** Takes the next delta of the reply; returns the text it releases (often `''`). */
  push(delta: string): string {
    this.#out = '';
    const n = delta.length;
    let i = 0;
    while (i < n) {
      if (this.#open === '') {
        const bracket = this.#markers === undefined ? -1 : delta.indexOf('[', i);
        const end = bracket === -1 ? n : bracket;
        if (end > i) this.#plain(delta, i, end);
        if (bracket === -1) break;
        this.#open = '[';
        i = bracket + 1;
      } else {
        i = this.#bracket(delta, i);
      }
    }
    return this.#out;
  }

  /** The end of the reply: releases a span that never closed; drops trailing whitespace. */
  end(): string {
    this.#out = '';
    if (this.#open !== '') this.#release();
    this.#space = '';
    return this.#out;
  }

  /** Extends the held span from `delta[i]`; returns where the scan stopped. */
  #bracket(delta: string, i: number): number {
    const n = delta.length;
    // The span may grow to BRACKET_WINDOW - 1 code units before its `]`.
    const limit = Math.min(n, i + BRACKET_WINDOW - this.#open.length);
    let j = i;
    while (j < limit) {
      const code = delta.charCodeAt(j);
      if (code === 0x5d /* ] */ || code === 0x5b /* [ */) break;
      j++;
    }
    if (j > i) this.#open += delta.slice(i, j);
    if (j === limit) {
      // The delta ended, or the span is too long to be a marker any more.
      if (this.#open.length >= BRACKET_WINDOW) this.#release();
      return j;
    }
    if (delta.charCodeAt(j) === 0x5b) {
      this.#release();
      this.#open = '[';
      return j + 1;
    }
    const span = `${this.#open}]`;
    if ((this.#markers as SignalMatcher).first(span) !== undefined) {
      // A marker: gone, with the whitespace before it.
      this.#open = '';
      this.#space = '';
    } else {
      this.#open = '';
      this.#plain(span, 0, span.length);
    }
    return j + 1;
  }

  /** Releases the held span as plain text (it is no marker). */
  #release(): void {
    const text = this.#open;
    this.#open = '';
    this.#plain(text, 0, text.length);
  }

  /** Plain text `s[from, to)`: released up to its last non-whitespace character; the rest is held. */
  #plain(s: string, from: number, to: number): void {
    let last = to - 1;
    while (last >= from && isJsWhitespace(s.charCodeAt(last))) last--;
    if (last < from) {
      this.#space += from === 0 && to === s.length ? s : s.slice(from, to);
      return;
    }
    if (this.#started) {
      this.#out += this.#space + s.slice(from, last + 1);
    } else {
      let first = from;
      while (isJsWhitespace(s.charCodeAt(first))) first++;
      this.#out += s.slice(first, last + 1);
      this.#started = true;
    }
    this.#space = last + 1 === to ? '' : s.slice(last + 1, to);
  }
}

/**
 * The visible text of one whole reply: `content` with every span a crew signal matches (see
 * {@link SignalHider}) removed together with the whitespace right before it, then trimmed.
 * @internal
 */
export function visibleText(content: string, markers: SignalMatcher | undefined): string {
  const hider = new SignalHider(markers);
  return hider.push(content) + hider.end();
}

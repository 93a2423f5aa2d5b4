import { describeValue } from '@signalyard/core';
import { escapeIdChars, forbiddenIdIndex, hasIdCharactersOnly, idCharacterProblem } from '@signalyard/core/internal';
import { SessionKeyError } from './errors/session-key-error.js';
import { canonicalId, isAsciiSpace } from './normalize.js';

// One id segment of a key string, both ways: escaping it when a key is formatted, unescaping and
// checking it when one is parsed. `%` → `%25`, `:` → `%3a`, and every character that
// lowercasing would change → its UTF-8 bytes as lowercase `%xx`; nothing else is escaped.

/**
 * Escapes one id segment for a key string, or returns `undefined` when `s` is not a canonical id
 * (`canonicalId(s, caseSensitive) === s`, non-empty, holding no character an id may not hold:
 * see `forbiddenIdIndex`). A segment needing no escape is returned as it is.
 */
export function escapeSegment(s: unknown, caseSensitive: boolean): string | undefined {
  if (typeof s !== 'string' || s.length === 0) return undefined;
  const n = s.length;
  let escapes = false;
  let ascii = true;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) {
      ascii = false;
      break;
    }
    if (c === 0x25 || c === 0x3a) escapes = true;
    else if (c < 0x20 || c === 0x7f)
      return undefined; // NUL or another control character: no id holds one
    else if (c >= 0x41 && c <= 0x5a) {
      if (!caseSensitive) return undefined;
      escapes = true;
    }
  }
  if (ascii) {
    if (isAsciiSpace(s.charCodeAt(0)) || isAsciiSpace(s.charCodeAt(n - 1))) return undefined;
    if (!escapes) return s;
  } else if (canonicalId(s, caseSensitive) !== s || !hasIdCharactersOnly(s)) {
    return undefined;
  }
  return escapeIdChars(s);
}

/** Throws the `SessionKeyError` of a key string that `parseSessionKey` refuses. */
export function parseError(text: string, problem: string): never {
  throw new SessionKeyError({
    problem,
    input: text,
    message: `Invalid session key ${describeValue(text.length > 200 ? `${text.slice(0, 200)}…` : text)}: ${problem}`,
  });
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/**
 * Decodes one escaped segment of the key string `text`, rejecting malformed and unnecessary
 * escapes, and ids that are not canonical or hold a character no id may hold.
 * @throws SessionKeyError naming the problem and the segment (`what`).
 */
export function decodeSegment(text: string, raw: string, what: string, caseSensitive: boolean): string {
  let value = raw;
  if (raw.includes('%')) {
    const out: string[] = [];
    let i = 0;
    while (i < raw.length) {
      if (raw.charCodeAt(i) !== 0x25) {
        const ch = String.fromCodePoint(raw.codePointAt(i) as number);
        out.push(ch);
        i += ch.length;
        continue;
      }
      const { ch, len } = decodeEscape(text, raw, i, what);
      out.push(ch);
      i += 3 * len;
    }
    value = out.join('');
  }
  if (value.includes('\u0000')) {
    parseError(text, `the ${what} ${describeValue(value)} contains a NUL character (U+0000): ids cannot contain NUL`);
  }
  const at = forbiddenIdIndex(value);
  const c = at === -1 ? 0 : value.charCodeAt(at);
  if (at !== -1 && (c < 0xd800 || c > 0xdfff)) {
    parseError(
      text,
      `the ${what} ${describeValue(value)} ${idCharacterProblem(value) as string}: ids cannot contain control characters`,
    );
  }
  if (at !== -1 || canonicalId(value, caseSensitive) !== value) {
    parseError(
      text,
      `the ${what} ${describeValue(value)} is not in canonical form (trimmed, NFC${caseSensitive ? '' : ', lowercase'})`,
    );
  }
  return value;
}

/** The byte a `%XX` escape at `at` stands for, or -1 when there is none. */
function escapedByte(raw: string, at: number): number {
  if (raw.charCodeAt(at) !== 0x25) return -1;
  const hi = hexValue(raw.charCodeAt(at + 1));
  const lo = hexValue(raw.charCodeAt(at + 2));
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/** The UTF-8 lead byte's value bits and sequence length, or `undefined` for a byte that cannot lead. */
function utf8Lead(b0: number): { cp: number; len: number } | undefined {
  if (b0 < 0x80) return { cp: b0, len: 1 };
  if (b0 >= 0xc2 && b0 <= 0xdf) return { cp: b0 & 0x1f, len: 2 };
  if (b0 >= 0xe0 && b0 <= 0xef) return { cp: b0 & 0x0f, len: 3 };
  if (b0 >= 0xf0 && b0 <= 0xf4) return { cp: b0 & 0x07, len: 4 };
  return undefined;
}

/** Decodes the UTF-8 escape sequence (`%XX`, one to four of them) at `i`: the character and its byte count. */
function decodeEscape(text: string, raw: string, i: number, what: string): { ch: string; len: number } {
  const b0 = escapedByte(raw, i);
  if (b0 < 0)
    parseError(text, `bad escape ${describeValue(raw.slice(i, i + 3))} in the ${what} (expected % and two hex digits)`);
  const lead = utf8Lead(b0);
  if (lead === undefined) {
    return parseError(text, `bad escape ${describeValue(raw.slice(i, i + 3))} in the ${what} (not a UTF-8 lead byte)`);
  }
  let { cp } = lead;
  const { len } = lead;
  for (let j = 1; j < len; j++) {
    const b = escapedByte(raw, i + 3 * j);
    if (b < 0x80 || b > 0xbf) {
      parseError(
        text,
        `bad escape ${describeValue(raw.slice(i, i + 3 * len))} in the ${what} (truncated UTF-8 sequence)`,
      );
    }
    cp = (cp << 6) | (b & 0x3f);
  }
  const minimum = len === 2 ? 0x80 : len === 3 ? 0x800 : 0x10000;
  if ((len > 1 && cp < minimum) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    parseError(text, `bad escape ${describeValue(raw.slice(i, i + 3 * len))} in the ${what} (invalid UTF-8 sequence)`);
  }
  if (cp === 0) {
    parseError(text, `escape "%00" in the ${what} stands for a NUL character (U+0000): ids cannot contain NUL`);
  }
  const ch = String.fromCodePoint(cp);
  if (ch !== '%' && ch !== ':' && ch.toLowerCase() === ch) {
    parseError(
      text,
      `unnecessary escape ${describeValue(raw.slice(i, i + 3 * len))} in the ${what} (only %, : and characters that lowercasing would change are escaped)`,
    );
  }
  return { ch, len };
}

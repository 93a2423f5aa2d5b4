import { unstorableTextIndex } from './checkpoint-text.js';
import { pushUtf8Escapes } from './utf8-escape.js';

// The id segments of session keys: their canonical form, which characters an id can hold (the
// rule every part of the sessions package that takes an id applies at its boundary — SessionKey
// factories, formatSessionKey, parseSessionKey, the route resolver, identity links, the routing
// config; decisions-wave3 §12), and how a key string escapes one. Here, not in @signalyard/sessions,
// so the MCP server builds exactly the keys `SessionKey.directMessage` builds without importing it.

/**
 * The canonical form of an id segment (peer, thread, task, main-key, subagent or ephemeral id,
 * identity-link name): NFC, trimmed, and lowercased unless `caseSensitive` (then NFC again, as
 * lowercasing can leave a composable sequence). `''` means nothing is left.
 *
 * Plain ASCII ids that are already canonical are returned as they are, without allocating.
 */
export function canonicalId(input: string, caseSensitive: boolean): string {
  const n = input.length;
  if (n > 0) {
    let ascii = true;
    let upper = false;
    for (let i = 0; i < n; i++) {
      const c = input.charCodeAt(i);
      if (c >= 0x80) {
        ascii = false;
        break;
      }
      if (c >= 0x41 && c <= 0x5a) upper = true;
    }
    if (ascii && !isAsciiSpace(input.charCodeAt(0)) && !isAsciiSpace(input.charCodeAt(n - 1))) {
      return caseSensitive || !upper ? input : input.toLowerCase();
    }
  }
  const trimmed = input.normalize('NFC').trim();
  if (caseSensitive) return trimmed;
  const lower = trimmed.toLowerCase();
  return lower === trimmed ? lower : lower.normalize('NFC');
}

/** True for the ASCII characters that `String.prototype.trim` removes (tab, line breaks, space). */
export function isAsciiSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}
/** What the messages say an id must be. */
export const ID_CHARACTERS = 'an id without control characters (C0, C1, bidirectional controls) or lone surrogates';

/**
 * The index of the first code unit of `s` no id may hold, or -1:
 *
 * - a NUL (U+0000) or a lone surrogate: the checkpoint stores and session locks key by the
 *   formatted session key and cannot hold them (core's `unstorableTextIndex`);
 * - a C0 or C1 control character (U+0001–U+001F, U+007F–U+009F) or a bidirectional control
 *   (U+202A–U+202E, U+2066–U+2069): printed, they move a terminal's cursor, start escape
 *   sequences, break lines or reverse text — a key holding one would fake rows in
 *   `signalyard sessions list` or show reversed in the inspector.
 *
 * A high surrogate followed by a low one is a well-formed pair; one at the very end is lone.
 */
export function forbiddenIdIndex(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f) return firstForbiddenFrom(s, i); // printable ASCII is the common case
  }
  return -1;
}

/** {@link forbiddenIdIndex} from `from` on, where the first character outside printable ASCII is. */
function firstForbiddenFrom(s: string, from: number): number {
  const unstorable = unstorableTextIndex(s);
  const end = unstorable === -1 ? s.length : unstorable;
  for (let i = from; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && (c <= 0x202e || (c >= 0x2066 && c <= 0x2069))))
      return i;
  }
  return unstorable;
}

/** True when `s` holds no character an id may not hold (see {@link forbiddenIdIndex}). */
export function hasIdCharactersOnly(s: string): boolean {
  return forbiddenIdIndex(s) === -1;
}

/**
 * Why `s` cannot be part of a session key (see {@link forbiddenIdIndex}), as a phrase that
 * follows the id in a message (`contains the control character U+001B at index 3`), or
 * `undefined` when it can.
 */
export function idCharacterProblem(s: string): string | undefined {
  const at = forbiddenIdIndex(s);
  if (at === -1) return undefined;
  const c = s.charCodeAt(at);
  if (c === 0) return `contains a NUL character (U+0000) at index ${at}`;
  if (c >= 0xd800 && c <= 0xdfff) return `contains a lone surrogate at index ${at} (not well-formed Unicode)`;
  const code = `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  return c >= 0x202a
    ? `contains the bidirectional control ${code} at index ${at}`
    : `contains the control character ${code} at index ${at}`;
}

/**
 * One id segment escaped for a key string: `%` → `%25`, `:` → `%3a`, and every character that
 * lowercasing would change → its UTF-8 bytes as lowercase `%xx`; nothing else. `id` must be a
 * canonical id ({@link canonicalId}) holding only id characters ({@link hasIdCharactersOnly}).
 */
export function escapeIdChars(id: string): string {
  const out: string[] = [];
  for (const ch of id) {
    if (ch === '%') out.push('%25');
    else if (ch === ':') out.push('%3a');
    else if (ch.toLowerCase() !== ch) pushUtf8Escapes(out, ch.codePointAt(0) as number);
    else out.push(ch);
  }
  return out.join('');
}

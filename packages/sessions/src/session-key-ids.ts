import { unstorableTextIndex } from '@signalyard/core/internal';

// Which characters an id can hold: the rule every part of the sessions package that takes an id
// applies at its boundary (SessionKey factories, formatSessionKey, parseSessionKey, the route
// resolver, identity links, the routing config). decisions-wave3 §12.

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

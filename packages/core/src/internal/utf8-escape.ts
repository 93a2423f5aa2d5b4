const HEX = '0123456789abcdef';

/**
 * Pushes the UTF-8 bytes of the code point `cp` onto `out` as lowercase `%xx` escapes (three
 * strings per byte: `'%'` and two hex digits): how a session key's id segment escapes a character
 * that lowercasing would change (`escapeIdChars`, session-id.ts).
 */
export function pushUtf8Escapes(out: string[], cp: number): void {
  const bytes: number[] =
    cp < 0x80
      ? [cp]
      : cp < 0x800
        ? [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)]
        : cp < 0x10000
          ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
          : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  for (const b of bytes) out.push('%', HEX.charAt(b >> 4), HEX.charAt(b & 15));
}

import { SignalyardError, assertCheckpointKey, describeValue } from '@signalyard/core';

/**
 * The index of the first code unit SQLite text cannot hold, or -1: a NUL (SQLite's C strings end
 * there, so the rest of the key would be cut off) or a lone surrogate (UTF-8 has no encoding for
 * it: it would become U+FFFD, and two different keys would collide). A high surrogate at the
 * very end counts as lone.
 * @internal
 */
export function unstorableIndex(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return i;
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff) {
        const next = text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          i++;
          continue;
        }
      }
      return i;
    }
  }
  return -1;
}

/**
 * Checks a key as core does (a non-empty string), plus what SQLite text can hold: no NUL, no
 * lone surrogate. Such keys are refused rather than silently truncated or merged with another.
 * @throws SignalyardError `CHECKPOINT_KEY_INVALID`.
 * @internal
 */
export function assertSqliteKey(key: unknown): asserts key is string {
  assertCheckpointKey(key);
  const at = unstorableIndex(key);
  if (at !== -1) {
    const what = key.charCodeAt(at) === 0 ? 'a NUL character' : 'a lone surrogate';
    throw new SignalyardError({
      code: 'CHECKPOINT_KEY_INVALID',
      message: `Invalid checkpoint key ${describeValue(key)}: it contains ${what} at index ${at}; SQLite text cannot store it (expected well-formed Unicode without NUL)`,
    });
  }
}

/**
 * The smallest string, in SQLite's byte order of UTF-8 (= code point order), above every string
 * that starts with `prefix`: `prefix` with its last code point incremented (U+10FFFF dropped and
 * carried). `undefined` when there is none (the prefix is empty or all U+10FFFF). `prefix` must
 * be storable (see {@link unstorableIndex}).
 * @internal
 */
export function prefixUpperBound(prefix: string): string | undefined {
  let end = prefix.length;
  while (end > 0) {
    const low = prefix.charCodeAt(end - 1);
    const start = low >= 0xdc00 && low <= 0xdfff && end >= 2 ? end - 2 : end - 1;
    const cp = prefix.codePointAt(start) as number;
    if (cp < 0x10ffff) return prefix.slice(0, start) + String.fromCodePoint(cp === 0xd7ff ? 0xe000 : cp + 1);
    end = start;
  }
  return undefined;
}

/** Ascending UTF-16 code-unit order, as `MemoryCheckpointStore.list` yields keys. @internal */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

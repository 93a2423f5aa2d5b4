import { SignalyardError, assertCheckpointKey, describeValue } from '@signalyard/core';

/**
 * The index of the first code unit PostgreSQL text cannot hold, or -1: a NUL (PostgreSQL
 * refuses it in text) or a lone surrogate (UTF-8 has no encoding for it: `pg` would send U+FFFD,
 * and two different keys would collide). A high surrogate at the very end counts as lone.
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

/** Names what {@link unstorableIndex} found at `at`. @internal */
export function unstorableWhat(text: string, at: number): string {
  return text.charCodeAt(at) === 0 ? 'a NUL character' : 'a lone surrogate';
}

/**
 * Checks a checkpoint key as core does (a non-empty string), plus what PostgreSQL text can hold:
 * no NUL, no lone surrogate. Such keys are refused rather than failing in the server or being
 * merged with another key.
 * @throws SignalyardError `CHECKPOINT_KEY_INVALID`.
 * @internal
 */
export function assertPostgresKey(key: unknown): asserts key is string {
  assertCheckpointKey(key);
  const at = unstorableIndex(key);
  if (at !== -1) {
    throw new SignalyardError({
      code: 'CHECKPOINT_KEY_INVALID',
      message: `Invalid checkpoint key ${describeValue(key)}: it contains ${unstorableWhat(key, at)} at index ${at}; PostgreSQL text cannot store it (expected well-formed Unicode without NUL)`,
    });
  }
}

/**
 * The smallest string, in PostgreSQL's `COLLATE "C"` order of UTF-8 bytes (= code point order),
 * above every string that starts with `prefix`: `prefix` with its last code point incremented
 * (U+10FFFF dropped and carried; U+D7FF jumps the surrogate block to U+E000). `undefined` when
 * there is none (the prefix is empty or all U+10FFFF). `prefix` must be storable.
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

import { CheckpointStoreError } from '../errors/checkpoint-store-error.js';
import { assertCheckpointKey } from './checkpoint-data.js';
import { describeValue } from '../signal.js';

/**
 * The index of the first code unit a UTF-8 text column cannot hold faithfully, or -1: a NUL
 * (C strings end there; PostgreSQL refuses it) or a lone surrogate (UTF-8 has no encoding for it:
 * drivers send U+FFFD, so two different keys would collide). A high surrogate at the very end
 * counts as lone. For store implementers.
 */
export function unstorableTextIndex(text: string): number {
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
 * Checks a key as {@link assertCheckpointKey} does (a non-empty string), plus what a UTF-8 text
 * column can hold: no NUL, no lone surrogate. Such keys are refused rather than silently
 * truncated or merged with another. `backend` names the store in the message. For store
 * implementers (the SQLite and PostgreSQL stores use it).
 *
 * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID`.
 * @example
 * ```ts
 * assertTextCheckpointKey(key, 'SQLite');
 * ```
 */
export function assertTextCheckpointKey(key: unknown, backend: string): asserts key is string {
  assertCheckpointKey(key);
  const at = unstorableTextIndex(key);
  if (at !== -1) {
    const what = key.charCodeAt(at) === 0 ? 'a NUL character' : 'a lone surrogate';
    throw new CheckpointStoreError({
      code: 'CHECKPOINT_KEY_INVALID',
      message: `Invalid checkpoint key ${describeValue(key)}: it contains ${what} at index ${at}; ${backend} text cannot store it (expected well-formed Unicode without NUL)`,
    });
  }
}

/**
 * The smallest string, in code point order (the byte order of UTF-8, as SQLite and PostgreSQL's
 * `COLLATE "C"` compare), above every string that starts with `prefix`: `prefix` with its last
 * code point incremented (U+10FFFF dropped and carried; U+D7FF jumps the surrogate block to
 * U+E000). `undefined` when there is none (an empty prefix, or all U+10FFFF). For range scans
 * that implement `list(prefix)` without LIKE. `prefix` must be storable
 * ({@link unstorableTextIndex} is -1).
 *
 * @example
 * ```ts
 * keyPrefixUpperBound('agent:a');   // 'agent:b'
 * ```
 */
export function keyPrefixUpperBound(prefix: string): string | undefined {
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

/** Ascending UTF-16 code-unit order: the order `CheckpointStore.list` implementations in this repository yield keys in. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The key range a text store scans for `list(prefix)`: every key that starts with a storable
 * `prefix` lies in `[from, to)` in code point order (`to` undefined: no upper bound). A prefix
 * with a NUL or a lone surrogate is cut there (`from`), so the scan is wider than the prefix: the
 * keys it yields go through {@link keysWithPrefix}, which checks the whole prefix.
 *
 * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID` when `prefix` is not a string.
 */
export function keyPrefixRange(prefix: unknown): { readonly from: string; readonly to: string | undefined } {
  assertKeyPrefix(prefix);
  const cut = unstorableTextIndex(prefix);
  const from = cut === -1 ? prefix : prefix.slice(0, cut);
  return { from, to: keyPrefixUpperBound(from) };
}

/**
 * Checks `list(prefix)`'s argument.
 * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID` when `prefix` is not a string.
 */
export function assertKeyPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string') {
    throw new CheckpointStoreError({
      code: 'CHECKPOINT_KEY_INVALID',
      message: `Invalid key prefix ${describeValue(prefix)}: expected a string`,
    });
  }
}

/**
 * The string keys among `keys` that start with `prefix`, in ascending code-unit order (the order
 * every store in this repository lists in; SQLite and PostgreSQL compare code points).
 */
export function keysWithPrefix(keys: Iterable<unknown>, prefix: string): string[] {
  const kept: string[] = [];
  for (const key of keys) if (typeof key === 'string' && key.startsWith(prefix)) kept.push(key);
  return kept.sort(compareCodeUnits);
}

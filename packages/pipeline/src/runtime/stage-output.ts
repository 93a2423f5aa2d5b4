import { frozenCopy, setData } from '@signalyard/core/internal';

/** The output of a stage that returned `undefined`. @internal */
export const EMPTY_OUTPUT: Record<string, unknown> = Object.freeze({});

/**
 * A stage's return value as its output: a copy without `undefined` values, frozen all the way
 * down (plain objects and arrays inside are deep, frozen copies; see `frozenCopy`), so neither
 * the stage nor anyone reading the output later can change what the run recorded. `undefined`
 * counts as `{}`; `undefined` is returned for anything that is not a plain object. Throws when
 * reading the value throws (a throwing getter, a hostile proxy); each value is read once.
 *
 * `previous` is the output the run holds under the same key: when the copy would hold exactly
 * its keys and values (no objects inside: those are always copied), `previous` is returned
 * instead, so a stage that returns the same flags again costs no freeze and leaves the run's
 * outputs unchanged.
 * @internal
 */
export function normalizeOutput(value: unknown, previous?: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return EMPTY_OUTPUT;
  if (typeof value !== 'object' || value === null) return undefined;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const source = value as Record<string, unknown>;
  const before = typeof previous === 'object' && previous !== null ? (previous as Record<string, unknown>) : undefined;
  let same = before !== undefined;
  let count = 0;
  const out: Record<string, unknown> = {};
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    const v = source[key];
    if (v === undefined) continue;
    if (typeof v === 'object' && v !== null) {
      same = false;
      setData(out, key, frozenCopy(v));
    } else {
      if (same) same = Object.hasOwn(before as object, key) && Object.is((before as Record<string, unknown>)[key], v);
      setData(out, key, v);
    }
    count++;
  }
  if (same && count === ownKeyCount(before as object)) return before;
  return Object.freeze(out);
}

/** How many own enumerable string keys `record` has (without allocating a key list). */
function ownKeyCount(record: object): number {
  let n = 0;
  for (const key in record) if (Object.hasOwn(record, key)) n++;
  return n;
}

import { frozenCopy } from '../shared/frozen-copy.js';
import { setData } from '../shared/set-data.js';

/** The output of a stage that returned `undefined`. @internal */
export const EMPTY_OUTPUT: Record<string, unknown> = Object.freeze({});

/**
 * A stage's return value as its output: a copy without `undefined` values, frozen all the way
 * down (plain objects and arrays inside are deep, frozen copies; see `frozenCopy`), so neither
 * the stage nor anyone reading the output later can change what the run recorded. `undefined`
 * counts as `{}`; `undefined` is returned for anything that is not a plain object. Throws when
 * reading the value throws (a throwing getter, a hostile proxy).
 * @internal
 */
export function normalizeOutput(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return EMPTY_OUTPUT;
  if (typeof value !== 'object' || value === null) return undefined;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    const v = source[key];
    if (v !== undefined) setData(out, key, typeof v === 'object' && v !== null ? frozenCopy(v) : v);
  }
  return Object.freeze(out);
}

import type { ArgCondition } from './approval.js';
import { jsonEqual } from './internal/json-equal.js';

const ALL_DIGITS = /^[0-9]+$/;

/**
 * Why `path` is not a valid argument path (a dot path of non-empty segments: `'amount'`,
 * `'to.email'`, `'items.0.sku'`), or `undefined` when it is one.
 * @internal
 */
export function argPathProblem(path: string): string | undefined {
  if (path === '') return 'the path is empty';
  if (path.split('.').includes('')) return 'a segment is empty (no leading, trailing or double dots)';
  return undefined;
}

/** What a path reads in the arguments: the value, or `MISSING`. */
const MISSING: unique symbol = Symbol('missing');

/**
 * The value at `path` in `args`: an all-digit segment indexes an array, any segment names an
 * own property of an object (an array's other properties, such as `length`, are not read).
 * `MISSING` when a step is absent, `undefined`, or leads into something that is not an object
 * or array. Never throws (a throwing getter reads as missing).
 */
function readPath(args: unknown, path: string): unknown {
  let value = args;
  try {
    for (const segment of path.split('.')) {
      if (typeof value !== 'object' || value === null) return MISSING;
      if (Array.isArray(value)) {
        if (!ALL_DIGITS.test(segment)) return MISSING;
        const index = Number(segment);
        if (index >= value.length) return MISSING;
        value = (value as readonly unknown[])[index];
      } else {
        if (!Object.hasOwn(value, segment)) return MISSING;
        value = (value as Readonly<Record<string, unknown>>)[segment];
      }
      if (value === undefined) return MISSING;
    }
  } catch {
    return MISSING;
  }
  return value;
}

/** The tests of a condition, other than `path` and `exists`. */
const VALUE_TESTS = ['equals', 'in', 'gt', 'gte', 'lt', 'lte', 'startsWith', 'endsWith', 'includes'] as const;

/**
 * Whether `condition` holds for a tool call's `args`: every test it gives holds. On a missing
 * path only `exists: false` holds (any other test fails); `gt`/`gte`/`lt`/`lte` fail on a
 * non-number, `startsWith`/`endsWith`/`includes` on a non-string; `equals` and `in` compare JSON
 * values structurally.
 * @internal
 */
export function conditionHolds(condition: ArgCondition, args: unknown): boolean {
  const value = readPath(args, condition.path);
  if (value === MISSING) {
    if (condition.exists !== false) return false;
    for (const test of VALUE_TESTS) if (condition[test] !== undefined) return false;
    return true;
  }
  if (condition.exists === false) return false;
  return valueTestsHold(condition, value);
}

function valueTestsHold(c: ArgCondition, value: unknown): boolean {
  if (c.equals !== undefined && !jsonEqual(value, c.equals)) return false;
  if (c.in !== undefined && !c.in.some((candidate) => jsonEqual(value, candidate))) return false;
  if (c.gt !== undefined || c.gte !== undefined || c.lt !== undefined || c.lte !== undefined) {
    if (typeof value !== 'number') return false;
    if (c.gt !== undefined && !(value > c.gt)) return false;
    if (c.gte !== undefined && !(value >= c.gte)) return false;
    if (c.lt !== undefined && !(value < c.lt)) return false;
    if (c.lte !== undefined && !(value <= c.lte)) return false;
  }
  if (c.startsWith !== undefined || c.endsWith !== undefined || c.includes !== undefined) {
    if (typeof value !== 'string') return false;
    if (c.startsWith !== undefined && !value.startsWith(c.startsWith)) return false;
    if (c.endsWith !== undefined && !value.endsWith(c.endsWith)) return false;
    if (c.includes !== undefined && !value.includes(c.includes)) return false;
  }
  return true;
}

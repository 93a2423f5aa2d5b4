import { isFrozenCopy, markFrozenCopy } from './frozen-mark.js';
import { setData } from './values.js';

// Deep, frozen copies of plain data, so that what a holder keeps (a pipeline run's input,
// outputs, payloads and answers) can be changed neither by the caller who passed it nor by code
// that reads it.

/**
 * A deep copy of `value` in which every plain object (prototype `Object.prototype` or `null`)
 * and array is copied and frozen; other values (primitives, functions, class instances such
 * as `Date` or `Map`) are kept as they are. Cycles and shared references are preserved. A value
 * this function returned before (or a frozen JSON value, `frozenJsonValue`) is returned
 * unchanged: it is already a frozen copy (both carry core's one frozen mark).
 *
 * Throws whatever reading `value` throws (a throwing getter, a hostile proxy, a structure too
 * deep for the stack): callers turn that into their own typed error.
 */
export function frozenCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  return copyObject(value, undefined) as T;
}

function copyValue(value: unknown, seen: Map<object, object>): unknown {
  return typeof value === 'object' && value !== null ? copyObject(value, seen) : value;
}

function copyObject(value: object, known: Map<object, object> | undefined): object {
  if (isFrozenCopy(value)) return value;
  const array = Array.isArray(value);
  if (!array) {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
  }
  const seen = known ?? new Map<object, object>();
  const earlier = seen.get(value);
  if (earlier !== undefined) return earlier;
  let out: object;
  if (array) {
    const source = value as readonly unknown[];
    const list = new Array<unknown>(source.length);
    seen.set(value, list);
    for (let i = 0; i < source.length; i++) list[i] = copyValue(source[i], seen);
    out = list;
  } else {
    const source = value as Record<string, unknown>;
    const record: Record<string, unknown> = {};
    seen.set(value, record);
    for (const key of Object.keys(source)) setData(record, key, copyValue(source[key], seen));
    out = record;
  }
  return markFrozenCopy(out);
}

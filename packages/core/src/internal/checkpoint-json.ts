import { serializeCheckpointData } from './checkpoint-data.js';
import { frozenJsonValue, isJsonRecord } from './frozen-mark.js';
import { setData } from './values.js';

/** What {@link copyJson} returns when the value needs the exact, slow path. */
const SLOW: unique symbol = Symbol('slow');

/** Deeper than this, {@link copyJson} leaves the value to JSON itself (which also finds cycles). */
const MAX_FAST_DEPTH = 64;

/**
 * What `JSON.parse(serializeCheckpointData(data, key))` returns — a copy with JSON's semantics,
 * the caller's objects never aliased — without the text in between: plain objects, plain arrays
 * and JSON primitives are copied directly, a frozen JSON value (`frozenJsonValue`, {@link frozenJsonCopy})
 * is shared (it cannot change), anything else (a `toJSON`, a class instance, a value JSON cannot represent, a cycle)
 * takes the exact path through the text. For the memory store, which keeps data, not text.
 * @throws CheckpointDataError `CHECKPOINT_DATA_INVALID`, as {@link serializeCheckpointData}.
 * @internal
 */
export function copyCheckpointData(data: unknown, key?: string): unknown {
  let copy: unknown = SLOW;
  try {
    copy = copyJson(data, 0);
  } catch {
    // A throwing getter or a hostile proxy: the exact path reports it.
  }
  return copy === SLOW ? JSON.parse(serializeCheckpointData(data, key)) : copy;
}

/**
 * A deep copy of `value` with JSON's semantics whose every object and list is frozen and marked
 * like `frozenJsonValue`'s (stores share it instead of copying it; frozen values inside are shared
 * as they are), or `undefined` when `value` holds anything the fast copy leaves to JSON itself (a
 * `toJSON`, a class instance, a value JSON cannot represent, a cycle, a throwing getter): such a
 * value is for the caller to keep as it is. A Runner's history keeps its messages so.
 * @internal
 */
export function frozenJsonCopy<T>(value: T): T | undefined {
  try {
    const copy = copyJson(value, 0, true);
    return copy === SLOW ? undefined : (copy as T);
  } catch {
    return undefined;
  }
}

/** `value` copied with JSON's semantics (`freeze`: every object and list frozen and marked), or SLOW. */
function copyJson(value: unknown, depth: number, freeze = false): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value + 0 : SLOW; // + 0 turns -0 into 0, as JSON does
    case 'object':
      if (value === null) return null;
      if (isJsonRecord(value)) return value;
      if (depth >= MAX_FAST_DEPTH || 'toJSON' in value) return SLOW;
      if (Array.isArray(value))
        return Object.getPrototypeOf(value) === Array.prototype ? copyArray(value, depth, freeze) : SLOW;
      return Object.getPrototypeOf(value) === Object.prototype ? copyObject(value, depth, freeze) : SLOW;
    default:
      return SLOW; // undefined, a function, a symbol, a BigInt: left to the exact path
  }
}

function copyArray(items: readonly unknown[], depth: number, freeze: boolean): unknown {
  const copy = new Array<unknown>(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const c = item === undefined ? null : copyJson(item, depth + 1, freeze); // JSON writes a hole or undefined as null
    if (c === SLOW) return SLOW;
    copy[i] = c;
  }
  return freeze ? frozenJsonValue(copy) : copy;
}

function copyObject(value: object, depth: number, freeze: boolean): unknown {
  const copy: Record<string, unknown> = {};
  // for-in (its enum cache allocates nothing) over own keys: the same keys, in the same order, as Object.keys.
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue; // JSON drops it
    const c = copyJson(v, depth + 1, freeze);
    if (c === SLOW || key === '__proto__') return SLOW;
    copy[key] = c;
  }
  return freeze ? frozenJsonValue(copy) : copy;
}

/**
 * A fresh, mutable copy of data {@link copyCheckpointData} made (JSON values only); a shared frozen
 * JSON record is copied too, so the caller owns every object it gets.
 * @internal
 */
export function cloneJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = cloneJson(value[i]);
    return copy;
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setData(copy, key, cloneJson((value as Record<string, unknown>)[key]));
  return copy;
}

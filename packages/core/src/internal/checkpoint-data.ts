import { CheckpointDataError } from '../errors/checkpoint-data-error.js';
import { CheckpointStoreError } from '../errors/checkpoint-store-error.js';
import { describeValue } from '../signal.js';

/** `JSON.stringify` as it really behaves: `undefined` for values with no JSON form. */
const stringify = JSON.stringify as (value: unknown) => string | undefined;

/**
 * True when JSON.stringify would silently drop or rewrite a value it cannot represent: a
 * non-finite number (boxed or not) becomes `null`, a function or symbol vanishes. Cycles and
 * BigInts make JSON.stringify throw, so they are found before this runs. Mirrors
 * JSON.stringify's traversal (own enumerable keys, `toJSON`).
 */
function dropsValues(value: unknown): boolean {
  switch (typeof value) {
    case 'number':
      return !Number.isFinite(value);
    case 'symbol':
      return true;
    case 'function':
    case 'bigint': {
      // JSON.stringify applies toJSON to functions and BigInts too.
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      return typeof toJSON === 'function' ? dropsValues((toJSON as (key: string) => unknown).call(value, '')) : true;
    }
    case 'object': {
      if (value === null) return false;
      let v: unknown = value;
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
        v = (v as { toJSON(key: string): unknown }).toJSON('');
        if (typeof v !== 'object' || v === null) return dropsValues(v);
      }
      if (v instanceof Number) return !Number.isFinite(v.valueOf());
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (dropsValues(v[i])) return true;
        return false;
      }
      for (const k in v as object) {
        if (Object.prototype.hasOwnProperty.call(v, k) && dropsValues((v as Record<string, unknown>)[k])) return true;
      }
      return false;
    }
    default:
      return false;
  }
}

/**
 * Serializes checkpoint data exactly as a {@link CheckpointStore} must keep it:
 * `JSON.stringify(data)`, except that values JSON cannot represent are rejected instead of being
 * silently dropped or turned into `null`. For store implementers.
 *
 * @throws CheckpointDataError `CHECKPOINT_DATA_INVALID` naming the path of the first bad value
 * (`NaN`, `±Infinity`, a `BigInt`, a function, a symbol, a cycle, or `undefined` data).
 * @example
 * ```ts
 * const text = serializeCheckpointData({ history: [] });   // '{"history":[]}'
 * ```
 */
export function serializeCheckpointData(data: unknown, key?: string): string {
  let text: string | undefined;
  try {
    // The fast path: plain JSON.stringify, then a cheap walk for what it would silently drop.
    text = stringify(data);
    if (text !== undefined && dropsValues(data)) throw new Error('a value has no JSON form');
  } catch (error) {
    let found: { path: string; problem: string } | undefined;
    try {
      found = findInvalid(data);
    } catch {
      // Locating the value failed too (a throwing toJSON() or getter, or nesting too deep to walk).
    }
    if (found !== undefined) throw new CheckpointDataError({ ...found, ...(key === undefined ? {} : { key }) });
    throw new CheckpointDataError({
      path: '$',
      problem: `serialization failed: ${error instanceof Error ? error.message : String(error)}`,
      ...(key === undefined ? {} : { key }),
    });
  }
  if (text === undefined) {
    throw new CheckpointDataError({
      path: '$',
      problem: `${describeValue(data)} has no JSON form`,
      ...(key === undefined ? {} : { key }),
    });
  }
  return text;
}

/** Walks `data` the way JSON.stringify does and names the first value it would reject. */
function findInvalid(data: unknown): { path: string; problem: string } | undefined {
  const ancestors: object[] = [];
  const visit = (holder: unknown, path: string): { path: string; problem: string } | undefined => {
    let value = holder;
    if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      value = (value as { toJSON(): unknown }).toJSON();
    }
    switch (typeof value) {
      case 'number':
        return Number.isFinite(value) ? undefined : { path, problem: `${String(value)} is not a JSON number` };
      case 'bigint':
        return { path, problem: `BigInt ${describeValue(value)} has no JSON form` };
      case 'function':
        return { path, problem: 'a function has no JSON form' };
      case 'symbol':
        return { path, problem: 'a symbol has no JSON form' };
      case 'object': {
        if (value === null) return undefined;
        if (value instanceof Number && !Number.isFinite(value.valueOf())) {
          return { path, problem: `${String(value.valueOf())} is not a JSON number` };
        }
        if (value instanceof BigInt) return { path, problem: 'a boxed BigInt has no JSON form' };
        if (ancestors.includes(value)) return { path, problem: 'a cycle: this object contains itself' };
        ancestors.push(value);
        try {
          if (Array.isArray(value)) {
            for (let i = 0; i < value.length; i++) {
              const hit = visit(value[i], `${path}[${i}]`);
              if (hit !== undefined) return hit;
            }
          } else {
            for (const k of Object.keys(value)) {
              const hit = visit(
                (value as Record<string, unknown>)[k],
                /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`,
              );
              if (hit !== undefined) return hit;
            }
          }
        } finally {
          ancestors.pop();
        }
        return undefined;
      }
      default:
        return undefined;
    }
  };
  return visit(data, '$');
}

/**
 * Checks a checkpoint key: a non-empty string. For store implementers.
 * @throws CheckpointStoreError `CHECKPOINT_KEY_INVALID`.
 */
export function assertCheckpointKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '') {
    throw new CheckpointStoreError({
      code: 'CHECKPOINT_KEY_INVALID',
      message: `Invalid checkpoint key ${describeValue(key)}: expected a non-empty string`,
    });
  }
}

/**
 * Checks an expected version for compare-and-set: a non-negative safe integer. For store implementers.
 * @throws CheckpointStoreError `CHECKPOINT_VERSION_INVALID`.
 */
export function assertExpectedVersion(version: unknown): asserts version is number {
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) {
    throw new CheckpointStoreError({
      code: 'CHECKPOINT_VERSION_INVALID',
      message: `Invalid expected checkpoint version ${describeValue(version)}: expected an integer >= 0 (0 = must not exist yet)`,
    });
  }
}

/**
 * The error every store operation rejects with after `close()` (code `CHECKPOINT_STORE_CLOSED`).
 * For store implementers.
 */
export function storeClosedError(storeName: string): CheckpointStoreError {
  return new CheckpointStoreError({
    code: 'CHECKPOINT_STORE_CLOSED',
    message: `${storeName} is closed: create a new store to load or save checkpoints`,
  });
}

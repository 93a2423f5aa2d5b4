/** Returns the object it is given: what lets {@link FrozenJsonStamp} add its private field to any object. */
class ReturnsItsArgument {
  constructor(value: object) {
    return value;
  }
}

/**
 * The mark of a frozen JSON value (see {@link frozenJsonValue}): a private field stamped on the
 * object itself (`new FrozenJsonStamp(value)`) right before it is frozen. Nothing outside this
 * module can see it, copy it or forge it — it is not a property: no spread, `Object.assign`,
 * `structuredClone` or descriptor copy carries it — so a stamped object is one this module froze.
 * Stamping and checking cost a few nanoseconds (a symbol property set with `defineProperty` cost
 * about 100).
 */
class FrozenJsonStamp extends ReturnsItsArgument {
  readonly #frozenJson = true;

  /** Whether `value` was stamped. */
  static has(value: object): boolean {
    return #frozenJson in value;
  }
}

/**
 * A frozen copy of `value` that stores share instead of copying, when it is a plain object whose
 * own enumerable properties all hold JSON primitives (strings, finite numbers other than -0,
 * booleans, null; `undefined` ones are dropped, as JSON drops them) — a chat message `{ role,
 * content }`. `undefined` for anything else.
 * @internal
 */
export function frozenJsonRecord<T extends object>(value: T): T | undefined {
  if (Object.getPrototypeOf(value) !== Object.prototype || 'toJSON' in value) return undefined;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (!isJsonPrimitive(v) || key === '__proto__') return undefined;
    copy[key] = v;
  }
  return frozenJsonValue(copy) as T;
}

function isJsonPrimitive(v: unknown): boolean {
  return (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v) && !Object.is(v, -0))
  );
}

/**
 * Freezes `value` and marks it like a record made by {@link frozenJsonRecord}, so that stores
 * share it instead of copying it: `value` is a new object the caller owns and vouches for — a
 * plain object whose own properties hold JSON primitives only, or a list of values made by this
 * function or by {@link frozenJsonRecord} (a Runner's history). Nothing is checked here (that is
 * the point: the caller built it). Returns `value`.
 * @internal
 */
export function frozenJsonValue<T extends object>(value: T): T {
  // `new FrozenJsonStamp(value)` is `value` itself, stamped. Its result is used, so that a bundler
  // never drops the call as side-effect free (esbuild did, when it stood alone).
  return Object.freeze(new FrozenJsonStamp(value) as T);
}

/** Whether `value` was made by {@link frozenJsonRecord} or {@link frozenJsonValue} (and so is frozen). @internal */
export function isJsonRecord(value: object): boolean {
  return FrozenJsonStamp.has(value);
}

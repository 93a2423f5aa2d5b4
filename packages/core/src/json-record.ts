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
 * Freezes `value` and marks it as a frozen JSON value, so that stores share it instead of copying
 * it. `value` is a new object or list the caller owns and vouches for: a plain object or list
 * whose every member is a JSON primitive or itself a value marked by this function (core's
 * `frozenJsonCopy` builds such values, and a Runner its history lists). Nothing is checked here —
 * that is the point: the caller built it — so never pass an object someone else holds, or one
 * with a mutable object inside: a store would share it as it is. Returns `value`.
 * @internal
 */
export function frozenJsonValue<T extends object>(value: T): T {
  // `new FrozenJsonStamp(value)` is `value` itself, stamped. Its result is used, so that a bundler
  // never drops the call as side-effect free (esbuild did, when it stood alone).
  return Object.freeze(new FrozenJsonStamp(value) as T);
}

/** Whether `value` was marked by {@link frozenJsonValue} (and so is frozen, and holds only JSON values). @internal */
export function isJsonRecord(value: object): boolean {
  return FrozenJsonStamp.has(value);
}

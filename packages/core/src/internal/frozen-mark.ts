/** Returns the object it is given: what lets {@link FrozenMark} add its private field to any object. */
class ReturnsItsArgument {
  constructor(value: object) {
    return value;
  }
}

/** A plain object or list frozen all the way down, holding JSON values only (see {@link frozenJsonValue}). */
const JSON_VALUE = 1;
/** A plain object or list frozen all the way down, holding any values (see {@link markFrozenCopy}). */
const FROZEN_COPY = 2;

/**
 * The one mark of the frozen copies the Signalyard packages make: a private field stamped on the
 * object itself (`new FrozenMark(value, kind)`) right before it is frozen. Nothing outside this
 * module can see it, copy it or forge it — it is not a property: no spread, `Object.assign`,
 * `structuredClone` or descriptor copy carries it — so a stamped object is one these functions
 * froze. Stamping and checking cost a few nanoseconds (a symbol property set with
 * `defineProperty` cost about 100, a `WeakSet` entry more than the stamp).
 *
 * Two kinds: a frozen JSON value ({@link frozenJsonValue}: stores share it instead of copying it)
 * and a frozen copy of any data ({@link markFrozenCopy}: the pipeline's inputs, outputs and
 * payloads, which may hold class instances or `undefined`). A frozen JSON value is a frozen copy
 * too; the reverse does not hold.
 */
class FrozenMark extends ReturnsItsArgument {
  readonly #kind: number;

  constructor(value: object, kind: number) {
    super(value);
    this.#kind = kind;
  }

  /** The kind `value` was stamped with, or 0. */
  static kindOf(value: object): number {
    return #kind in value ? value.#kind : 0;
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
  // `new FrozenMark(value, …)` is `value` itself, stamped. Its result is used, so that a bundler
  // never drops the call as side-effect free (esbuild did, when it stood alone).
  return Object.freeze(new FrozenMark(value, JSON_VALUE) as T);
}

/** Whether `value` was marked by {@link frozenJsonValue} (and so is frozen, and holds only JSON values). @internal */
export function isJsonRecord(value: object): boolean {
  return FrozenMark.kindOf(value) === JSON_VALUE;
}

/**
 * Freezes `value` and marks it as a frozen copy: a new plain object or list the caller built,
 * whose every member is a primitive, a value the caller does not own (a class instance, a
 * function) or itself a marked value. Returns `value`. As for {@link frozenJsonValue}, nothing
 * is checked. @internal
 */
export function markFrozenCopy<T extends object>(value: T): T {
  return Object.freeze(new FrozenMark(value, FROZEN_COPY) as T);
}

/** Whether `value` was marked by {@link markFrozenCopy} or {@link frozenJsonValue}: frozen all the way down. @internal */
export function isFrozenCopy(value: object): boolean {
  return FrozenMark.kindOf(value) !== 0;
}

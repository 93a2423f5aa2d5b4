/**
 * Marks a frozen JSON record (see {@link frozenJsonRecord}); only that function sets it. A record
 * is frozen and holds JSON primitives only, so it can never change: a store may share it between
 * the versions it keeps instead of copying it. Non-enumerable: a spread copy never carries it.
 */
const JSON_RECORD: unique symbol = Symbol('signalyard.jsonRecord');
const MARK: PropertyDescriptor = Object.freeze({ value: true });

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
  Object.defineProperty(value, JSON_RECORD, MARK);
  return Object.freeze(value);
}

/** Whether `value` was made by {@link frozenJsonRecord} or {@link frozenJsonValue}. @internal */
export function isJsonRecord(value: object): boolean {
  return (value as { readonly [JSON_RECORD]?: true })[JSON_RECORD] === true && Object.isFrozen(value);
}

/** A plain record: an object that is neither `null` nor an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Freezes `value` and everything reachable from it through own enumerable properties, in place,
 * and returns it. Already-frozen objects are taken as frozen all the way down (their contents
 * are not visited again), so freezing a structure twice costs one check; cycles are fine.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value); // first, so a cycle back to it ends the walk
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** `record[key] = value`, keeping a `__proto__` key as data (an own property, the prototype untouched). */
export function setData(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}

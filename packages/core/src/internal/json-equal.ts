/** Deeper than this, two values are reported unequal (a guard against cyclic data, which JSON cannot hold). */
const MAX_DEPTH = 512;

/**
 * Structural equality of JSON values: primitives by `===` (so `0` equals `-0`; `NaN` equals
 * `NaN`), arrays element by element, objects by their own enumerable keys whatever their order
 * (a key whose value is `undefined` counts as absent, as in JSON). An array never equals an
 * object. Used by approval conditions (`equals`, `in`) and by `streamChat`'s tool-call check.
 * @internal
 */
export function jsonEqual(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || depth > MAX_DEPTH) return false;
  const aIsArray = Array.isArray(a);
  if (aIsArray !== Array.isArray(b)) return false;
  if (aIsArray) {
    const x = a as readonly unknown[];
    const y = b as readonly unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!jsonEqual(x[i], y[i], depth + 1)) return false;
    return true;
  }
  const x = a as Readonly<Record<string, unknown>>;
  const y = b as Readonly<Record<string, unknown>>;
  let count = 0;
  for (const key of Object.keys(x)) {
    const value = x[key];
    if (value === undefined) continue;
    count++;
    if (!Object.hasOwn(y, key) || !jsonEqual(value, y[key], depth + 1)) return false;
  }
  for (const key of Object.keys(y)) if (y[key] !== undefined) count--;
  return count === 0;
}

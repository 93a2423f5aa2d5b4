/**
 * The equality routing rules use (see `RoutingRule`): primitives by `===` (`0` equals `-0`,
 * `NaN` equals nothing); arrays and plain objects by recursive deep equality with the same rule,
 * key order ignored and keys whose value is `undefined` ignored; any other object (a `Date`, a
 * `Map`, a class instance) only by identity. Values of different types are unequal; cyclic values
 * compare without overflowing. Never throws unless a getter inside a value throws.
 *
 * @example
 * ```ts
 * ruleValuesEqual({ a: [1, -0] }, { a: [1, 0] });   // true
 * ruleValuesEqual(NaN, NaN);                        // false
 * ruleValuesEqual(1, '1');                          // false
 * ```
 */
export function ruleValuesEqual(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b;
  return deepEqual(a, b, []);
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `stack` holds the pairs being compared (a0, b0, a1, b1, ...): a pair met again compares equal. */
function deepEqual(a: object, b: object, stack: object[]): boolean {
  const aArray = Array.isArray(a);
  if (aArray !== Array.isArray(b)) return false;
  if (!aArray && (!isPlainObject(a) || !isPlainObject(b))) return a === b;
  for (let i = 0; i < stack.length; i += 2) if (stack[i] === a && stack[i + 1] === b) return true;
  stack.push(a, b);
  const equal = aArray ? arraysEqual(a as unknown[], b as unknown[], stack) : objectsEqual(a, b, stack);
  stack.length -= 2;
  return equal;
}

function valueEqual(x: unknown, y: unknown, stack: object[]): boolean {
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return x === y;
  return deepEqual(x, y, stack);
}

function arraysEqual(a: readonly unknown[], b: readonly unknown[], stack: object[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!valueEqual(a[i], b[i], stack)) return false;
  return true;
}

function objectsEqual(a: object, b: object, stack: object[]): boolean {
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(ra)) {
    const x = ra[key];
    if (x === undefined) continue;
    count++;
    if (!Object.hasOwn(rb, key)) return false;
    if (!valueEqual(x, rb[key], stack)) return false;
  }
  for (const key of Object.keys(rb)) if (rb[key] !== undefined) count--;
  return count === 0;
}

import { describeValue } from '../signal.js';

/**
 * The names a configuration may not give to something it declares as a key — an identity-link
 * name in the routing TOML, a parallel group in crew.yaml: `__proto__` and `constructor`. On a
 * plain object such a key reaches the prototype (or shadows it) instead of being an own entry,
 * so both loaders refuse them with the same rule. Names written as values (agent ids, peer ids)
 * are data and may be anything.
 */
const RESERVED_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

/** True when `name` is one of the reserved names (`__proto__`, `constructor`). */
export function isReservedName(name: string): boolean {
  return RESERVED_NAMES.has(name);
}

/**
 * The problem to report when a configuration declares `name` as `what` (e.g. `'an identity-link
 * name'`, `'a parallel group name'`) and it is reserved, else `undefined`.
 */
export function reservedNameProblem(name: string, what: string): string | undefined {
  return RESERVED_NAMES.has(name) ? `${describeValue(name)} is a reserved name and cannot be ${what}` : undefined;
}

import { describeValue, type ConfigProblem } from '@signalyard/core';

// What the configuration checks share: the list of problems they add to, and small predicates.

/** Collects the problems of a configuration, in the order found. @internal */
export class ConfigProblems {
  readonly list: ConfigProblem[] = [];

  add(path: string, message: string): void {
    this.list.push({ path, message });
  }

  /** Adds a problem for each key of `o` not in `allowed`, at `<prefix><key>`. */
  unknownKeys(o: Record<string, unknown>, allowed: readonly string[], prefix: string): void {
    for (const key of Object.keys(o)) {
      if (!allowed.includes(key))
        this.add(`${prefix}${key}`, `unknown key ${JSON.stringify(key)}: expected one of ${allowed.join(', ')}`);
    }
  }
}

/** @internal */
export type Rec = Record<string, unknown>;

/** A non-blank string. @internal */
export function isName(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** `expected <what>, got <value>`. @internal */
export function got(what: string, value: unknown): string {
  return `expected ${what}, got ${describeValue(value)}`;
}

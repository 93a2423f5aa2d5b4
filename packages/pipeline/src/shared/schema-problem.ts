import { describeValue } from '@signalyard/core';
import type * as z from 'zod';
import { messageOf } from './error-message.js';

// Turning a zod schema's verdict into the first problem, with a path and a message: the schemas
// of this package carry their full messages (they name the bad value and what was expected), so
// a caller only wraps the problem in its own typed error.

/** The first problem a schema found in a value. */
export interface SchemaProblem {
  /** Where, as a path below the value (`['quota', 'timeoutMs']`); an unknown key ends the path. */
  readonly path: readonly PropertyKey[];
  /** The message the schema gave (this package's schemas name the bad value and what was expected). */
  readonly message: string;
  /** The bad value (for an unknown key, its value). */
  readonly input: unknown;
}

/**
 * Parses `value` with `schema`: the parsed value, or the first problem. Unknown keys are
 * reported before other problems of the same object. Never throws: when reading `value`
 * throws (a throwing getter, a hostile proxy), that is the problem.
 */
export function parseWithSchema<T>(
  schema: z.ZodType<T>,
  value: unknown,
): { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: SchemaProblem } {
  let result: z.ZodSafeParseResult<T>;
  try {
    // zod's fast path first; only a failure is parsed again to report the bad input (which
    // makes zod take its slow path, about 30 times slower)
    result = schema.safeParse(value);
    if (!result.success) result = schema.safeParse(value, { reportInput: true });
  } catch (error) {
    const message = `reading ${describeValue(value)} threw: ${messageOf(error)}`;
    return { ok: false, problem: { path: [], message, input: value } };
  }
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues;
  const first = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0];
  if (first === undefined) return { ok: false, problem: { path: [], message: 'invalid value', input: value } };
  if (first.code !== 'unrecognized_keys')
    return { ok: false, problem: { path: first.path, message: first.message, input: first.input } };
  const key = first.keys[0] ?? '';
  return {
    ok: false,
    problem: { path: [...first.path, key], message: first.message, input: readSafely(first.input, key) },
  };
}

function readSafely(record: unknown, key: string): unknown {
  try {
    return (record as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** `root` followed by `path`: `.key` for identifier keys, `[i]` for indexes, `["a->b"]` for other keys. */
export function formatPath(root: string, path: readonly PropertyKey[]): string {
  let out = root;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'symbol') out += `[${key.toString()}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}

/**
 * The error option of a zod schema or check whose message is `Invalid <label> <value>: expected
 * <expected>` (the value described, never throwing).
 */
export function invalid(label: string, expected: string): { error: (issue: { input?: unknown }) => string } {
  return { error: (issue) => `Invalid ${label} ${describeValue(issue.input)}: expected ${expected}` };
}

/**
 * The error option of a strict object schema: an unknown key is `Unknown option "<key>" in
 * <name>: expected one of <keys>`; anything but an object is `Invalid <name> <value>: expected an
 * object { <keys> }`.
 */
export function strictObjectError(
  name: string,
  keys: readonly string[],
  unknownKeyWord = 'option',
): { error: (issue: { code?: string; keys?: readonly string[]; input?: unknown }) => string } {
  return {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `Unknown ${unknownKeyWord} ${JSON.stringify(issue.keys?.[0] ?? '')} in ${name}: expected one of ${keys.join(', ')}`
        : `Invalid ${name} ${describeValue(issue.input)}: expected an object { ${keys.join(', ')} }`,
  };
}

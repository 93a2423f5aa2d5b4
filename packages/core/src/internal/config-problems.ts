import type { $ZodIssue } from 'zod/v4/core';
import type { ConfigProblem } from '../errors/config-error.js';

// How a configuration problem names where it is, and how a zod verdict becomes problems: one
// implementation for every config loader (crew.yaml, routing TOML, configs written in code), so
// the same bad key prints the same path whichever file it is in.

/** A key printed without quotes: a letter or `_`, then letters, digits, `_` or `-`. */
const BARE_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * A configuration path as every config problem prints it: keys that are bare identifiers (a
 * letter or `_`, then letters, digits, `_` or `-`) joined with dots; any other key quoted in
 * brackets, JSON-style (`["1abc"]`, `["a.b"]`, `["+15551234"]`, `[""]`); list indexes as `[i]`.
 * The empty path is `''` (the root).
 *
 * @example
 * ```ts
 * formatConfigPath(['routing', 'bindings', 2, 'match', 'peer', 'id']);   // 'routing.bindings[2].match.peer.id'
 * formatConfigPath(['routing', 'signals', '1abc']);                      // 'routing.signals["1abc"]'
 * ```
 */
export function formatConfigPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'symbol') out += `[${seg.toString()}]`;
    else if (BARE_KEY.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** Where a problem sits in the text it was read from (1-based). */
export interface ConfigPosition {
  readonly line: number;
  readonly column?: number;
}

/** Options of {@link configProblemsFromZod}. */
export interface ZodProblemOptions {
  /**
   * Renames an issue's path before it is located and printed, e.g. from the camelCase keys of
   * the code form to the snake_case keys of the file. For an unknown key, the path ends with
   * that key.
   */
  readonly mapPath?: (path: readonly PropertyKey[]) => readonly PropertyKey[];
  /**
   * The message of an issue other than an unknown key; `undefined` keeps zod's message. (Each
   * unknown key is `unknown key "<key>"`.)
   */
  readonly message?: (issue: $ZodIssue) => string | undefined;
  /** The line (and column) of the problem at `path` (already mapped), for problems read from a file. */
  readonly position?: (path: readonly PropertyKey[], issue: $ZodIssue) => ConfigPosition | undefined;
}

/**
 * zod issues as {@link ConfigProblem}s, in issue order: one problem per issue, except that an
 * `unrecognized_keys` issue becomes one problem per unknown key (`unknown key "colour"`, its
 * path ending with that key, so a file's line points at the key itself). Paths are printed by
 * {@link formatConfigPath}.
 *
 * @example
 * ```ts
 * const result = schema.safeParse(data);
 * if (!result.success) throw new ConfigError({ problems: configProblemsFromZod(result.error.issues) });
 * ```
 */
export function configProblemsFromZod(issues: readonly $ZodIssue[], options: ZodProblemOptions = {}): ConfigProblem[] {
  const { mapPath, message, position } = options;
  const out: ConfigProblem[] = [];
  const add = (rawPath: readonly PropertyKey[], text: string, issue: $ZodIssue): void => {
    const path = mapPath === undefined ? rawPath : mapPath(rawPath);
    const at = position?.(path, issue);
    const problem: ConfigProblem = { path: formatConfigPath(path), message: text };
    out.push(
      at === undefined
        ? problem
        : { ...problem, line: at.line, ...(at.column === undefined ? {} : { column: at.column }) },
    );
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add([...issue.path, key], `unknown key ${JSON.stringify(key)}`, issue);
    } else {
      add(issue.path, message?.(issue) ?? issue.message, issue);
    }
  }
  return out;
}

/**
 * Sorts problems in place into document order: by line, problems without a line last. The sort
 * is stable, so problems on one line keep the order they were found in.
 */
export function sortConfigProblems(problems: ConfigProblem[]): ConfigProblem[] {
  return problems.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
}

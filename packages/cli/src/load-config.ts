import { extname } from 'node:path';
import { ConfigError, describeValue, type ConfigProblem } from '@signalyard/core';
import { parseCrewConfig, type CrewConfig } from '@signalyard/crew';
import { lintRoutingToml, parseRoutingConfig, type RoutingConfig, type RoutingLintWarning } from '@signalyard/sessions';
import { CliUsageError } from './errors/cli-usage-error.js';
import { readTextFile } from './read-input.js';

/** The two configuration files the command understands. */
export type ConfigKind = 'crew' | 'routing';

const BY_EXTENSION: Readonly<Record<string, ConfigKind>> = { '.yaml': 'crew', '.yml': 'crew', '.toml': 'routing' };

/**
 * The kind of `file`: `explicit` when given, else by extension (`.yaml` / `.yml` → crew,
 * `.toml` → routing, case-insensitive).
 *
 * @throws CliUsageError when there is no `explicit` kind and the extension says nothing.
 */
export function configKindOf(file: string, explicit: ConfigKind | undefined): ConfigKind {
  if (explicit !== undefined) return explicit;
  const kind = BY_EXTENSION[extname(file).toLowerCase()];
  if (kind === undefined) {
    throw new CliUsageError({
      message: `cannot tell what ${describeValue(file)} is from its extension (.yaml or .yml for a crew, .toml for routing): pass --kind crew or --kind routing`,
    });
  }
  return kind;
}

/**
 * Reads and parses a crew.yaml.
 *
 * @throws CliInputError when the file cannot be read; ConfigError (with `file` as given) listing
 *   every problem in it.
 */
export async function loadCrew(file: string, cwd: string): Promise<CrewConfig> {
  return parseCrew(file, await readTextFile(file, cwd));
}

/**
 * Parses the text of a crew.yaml read from `file`.
 *
 * @throws ConfigError (with `file` as given) listing every problem in it.
 */
export function parseCrew(file: string, text: string): CrewConfig {
  return withFile(file, text, () => parseCrewConfig(text, { file }));
}

/**
 * Reads and parses a routing TOML file.
 *
 * @throws CliInputError when the file cannot be read; ConfigError (with `file` as given) listing
 *   every problem in it.
 */
export async function loadRouting(file: string, cwd: string): Promise<RoutingConfig> {
  const text = await readTextFile(file, cwd);
  return withFile(file, text, () => parseRoutingConfig(text));
}

/**
 * Parses and lints the text of a routing TOML file read from `file`: the config and its warnings
 * (bindings that can never win), each with its TOML path and line.
 *
 * @throws ConfigError (with `file` as given) listing every problem in it.
 */
export function lintRouting(file: string, text: string): { config: RoutingConfig; warnings: RoutingLintWarning[] } {
  return withFile(file, text, () => ({ config: parseRoutingConfig(text), warnings: lintRoutingToml(text) }));
}

/**
 * Runs `parse`, giving a ConfigError it throws the file name as typed, and its problems lines
 * within the file: a parser that reports an error at the end of the input (the TOML parser for
 * an unclosed array, say) may place it on the line after a final line break, which the file does
 * not have; such a problem is reported at the end of the file's last line. (crew.yaml's parser
 * already reports an unterminated quote where it opens.)
 */
function withFile<T>(file: string, text: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (ConfigError.isInstance(error)) {
      const problems = error.problems.map((p) => withinText(p, text));
      throw new ConfigError({ file, problems, cause: error });
    }
    /* v8 ignore next -- the parsers throw nothing else */
    throw error;
  }
}

/** `problem`, its line (and column) moved to the end of the last line when past it. */
function withinText(problem: ConfigProblem, text: string): ConfigProblem {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  if (problem.line === undefined || problem.line <= lines.length) return problem;
  return { ...problem, line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
}

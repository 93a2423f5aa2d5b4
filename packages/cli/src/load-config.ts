import { extname } from 'node:path';
import { ConfigError, describeValue } from '@signalyard/core';
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
  return parseCrewConfig(await readTextFile(file, cwd), { file });
}

/**
 * Reads and parses a routing TOML file.
 *
 * @throws CliInputError when the file cannot be read; ConfigError (with `file` as given) listing
 *   every problem in it.
 */
export async function loadRouting(file: string, cwd: string): Promise<RoutingConfig> {
  const text = await readTextFile(file, cwd);
  return withFile(file, () => parseRoutingConfig(text));
}

/**
 * Reads, parses and lints a routing TOML file: the config and its warnings (bindings that can
 * never win), each with its TOML path and line.
 *
 * @throws CliInputError when the file cannot be read; ConfigError (with `file` as given) listing
 *   every problem in it.
 */
export async function lintRouting(
  file: string,
  cwd: string,
): Promise<{ config: RoutingConfig; warnings: RoutingLintWarning[] }> {
  const text = await readTextFile(file, cwd);
  return withFile(file, () => ({ config: parseRoutingConfig(text), warnings: lintRoutingToml(text) }));
}

/** Runs `parse`, giving a ConfigError it throws the file name as typed. */
function withFile<T>(file: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (ConfigError.isInstance(error)) throw new ConfigError({ file, problems: error.problems, cause: error });
    /* v8 ignore next -- the parsers throw nothing else */
    throw error;
  }
}

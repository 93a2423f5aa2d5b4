import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, describeValue } from '@signalyard/core';
import { errorCode, errorText } from '@signalyard/core/internal';
import type { Runner, RunnerOptions } from 'signalyard';
import { CliConfigError } from './errors/cli-config-error.js';

/** A `--config` module's `RunnerOptions`, and where they came from. @public (for every `--config` command) */
export interface LoadedRunnerConfig {
  /** The module as given on the command line (for messages). */
  readonly file: string;
  /** Its absolute path. */
  readonly path: string;
  /** What its default export is, or what its default export function returned. */
  readonly options: RunnerOptions;
}

/** What `import()` throws for a file that is not a JavaScript module (a .yaml, a .json without attributes). */
const UNLOADABLE_CODES: ReadonlySet<string> = new Set([
  'ERR_UNKNOWN_FILE_EXTENSION',
  'ERR_UNKNOWN_MODULE_FORMAT',
  'ERR_IMPORT_ASSERTION_TYPE_MISSING',
  'ERR_IMPORT_ATTRIBUTE_MISSING',
]);

/** Extensions loaded through tsx (Node.js 20 cannot strip types itself). */
const TYPESCRIPT = new Set(['.ts', '.mts', '.cts', '.tsx']);

/**
 * Loads a runner configuration module (`--config <module>`, decisions-wave3 §9): its default
 * export is `RunnerOptions` or a function returning them (sync or async), called with no
 * arguments. `file` is resolved against `cwd`; `.js` / `.mjs` / `.cjs` load with the platform's
 * `import()`, `.ts` / `.mts` / `.cts` / `.tsx` through the `tsx` loader installed in the
 * project (resolved from the module's folder, then from `cwd`). The options are checked for
 * their outline only (an object); `createRunner` checks the rest ({@link openConfiguredRunner}).
 *
 * @throws CliConfigError `CLI_CONFIG_NOT_FOUND` for a missing file, `CLI_CONFIG_UNLOADABLE` for
 *   a `.ts` module without tsx (or a file that is not a module), `CLI_CONFIG_FAILED` when the
 *   module or its function throws, `CLI_CONFIG_INVALID` for a default export of another shape.
 * @public (for every `--config` command: `approve`, `worker`, `mcp serve`, `replay`)
 */
export async function loadRunnerConfig(file: string, cwd: string): Promise<LoadedRunnerConfig> {
  const { path, exported } = await importConfigDefault(file, cwd);
  const options = await optionsOf(file, exported);
  return { file, path, options };
}

/**
 * Imports a `--config` module (`.ts` through tsx, as {@link loadRunnerConfig}) and returns its
 * default export, unchecked: for commands whose module exports something else than
 * `RunnerOptions` (`replay` and `eval`: a function of `{ store, clock, model, tools }`).
 * @throws CliConfigError as {@link loadRunnerConfig} does, except `CLI_CONFIG_INVALID` for the
 *   export's shape.
 */
export async function importConfigDefault(
  file: string,
  cwd: string,
): Promise<{ readonly path: string; readonly exported: unknown; readonly module: Record<string, unknown> }> {
  const path = resolve(cwd, file);
  const shown = describeValue(file);
  await mustBeFile(file, path);
  if (TYPESCRIPT.has(extname(path).toLowerCase())) await registerTsx(file, path, cwd);
  let exported: unknown;
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
    if (!('default' in module) || module.default === undefined) {
      throw invalid(
        file,
        `config ${shown} has no default export: expected \`export default { agents: [...], store }\` (RunnerOptions) or a function returning them`,
      );
    }
    exported = module.default;
  } catch (error) {
    if (CliConfigError.isInstance(error)) throw error;
    const code = errorCode(error);
    if (code !== undefined && UNLOADABLE_CODES.has(code)) {
      throw new CliConfigError({
        code: 'CLI_CONFIG_UNLOADABLE',
        file,
        message: `cannot load config ${shown}: Node.js does not load ${describeValue(extname(path))} files as modules (${errorText(error)}); pass a .js, .mjs or .ts module`,
        cause: error,
      });
    }
    throw failed(file, `loading config ${shown} failed: ${errorText(error)}`, error);
  }
  return { path, exported, module };
}

/** The default export's options: itself, or what the function returns (awaited). */
async function optionsOf(file: string, exported: unknown): Promise<RunnerOptions> {
  const shown = describeValue(file);
  let value = exported;
  if (typeof exported === 'function') {
    try {
      value = await (exported as () => unknown)();
    } catch (error) {
      throw failed(file, `the default export function of config ${shown} failed: ${errorText(error)}`, error);
    }
    if (typeof value === 'function') {
      throw invalid(
        file,
        `the default export function of config ${shown} returned a function, expected RunnerOptions ({ agents: [...], store, ... })`,
      );
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const what = typeof exported === 'function' ? 'the default export function returned' : 'the default export is';
    throw invalid(
      file,
      `config ${shown}: ${what} ${describeValue(value)}, expected RunnerOptions ({ agents: [...], store, ... }) or a function returning them`,
    );
  }
  return value as RunnerOptions;
}

/** A runner built from a `--config` module, with how to close it and what the module opened. */
export interface ConfiguredRunner extends LoadedRunnerConfig {
  readonly runner: Runner;
  /** Closes the runner, then the inbox, the lock and the store the config gave (the CLI's process is theirs now). */
  close(): Promise<void>;
}

/**
 * Loads a `--config` module ({@link loadRunnerConfig}), builds its runner with `createRunner` and
 * starts it (its plugins set up, so that `close()` disposes them). With `requireStore`, a config without `store` is refused: the default store is
 * an empty memory store, which holds none of the app's sessions. `adjust` turns the module's
 * options into the ones the runner is built with (the worker command's `worker: true`); what it
 * throws propagates.
 *
 * @throws CliConfigError as {@link loadRunnerConfig}; `CLI_CONFIG_INVALID` without a required
 *   store; `CLI_CONFIG_FAILED` when the runner does not start (a plugin's setup threw).
 *   ConfigError (with `file` set to the module) listing what `createRunner` refused.
 */
export async function openConfiguredRunner(
  file: string,
  cwd: string,
  opts: { requireStore?: string; adjust?: (options: RunnerOptions) => RunnerOptions } = {},
): Promise<ConfiguredRunner> {
  const config = await loadRunnerConfig(file, cwd);
  const loaded = opts.adjust === undefined ? config : { ...config, options: opts.adjust(config.options) };
  const { options } = loaded;
  if (opts.requireStore !== undefined && options.store === undefined) {
    throw invalid(
      file,
      `config ${describeValue(file)} gives no store: ${opts.requireStore} needs the store the app's runners use (RunnerOptions.store), not a fresh memory store`,
    );
  }
  const { createRunner } = await import('signalyard');
  let runner: Runner;
  try {
    runner = createRunner(options);
  } catch (error) {
    if (ConfigError.isInstance(error)) throw new ConfigError({ file, problems: error.problems, cause: error });
    throw failed(
      file,
      `createRunner() refused the options of config ${describeValue(file)}: ${errorText(error)}`,
      error,
    );
  }
  const close = async (): Promise<void> => {
    try {
      await runner.close();
    } finally {
      await closeQuietly(options.inbox);
      await closeQuietly(options.lock);
      await closeQuietly(options.store);
    }
  };
  // Started as the app starts it: the plugins' setup runs now, so that closing disposes them
  // (a plugin that holds a connection the config opened ends it), whatever the command does.
  try {
    await runner.start();
  } catch (error) {
    await close();
    throw failed(file, `the runner of config ${describeValue(file)} did not start: ${errorText(error)}`, error);
  }
  return { ...loaded, runner, close };
}

async function closeQuietly(resource: unknown): Promise<void> {
  const closable = resource as { close?: unknown } | undefined;
  if (typeof closable?.close !== 'function') return;
  try {
    await (closable.close as () => unknown).call(closable);
  } catch {
    // Closing on the way out: the command's result is already decided.
  }
}

async function mustBeFile(file: string, path: string): Promise<void> {
  let isFile: boolean;
  try {
    isFile = (await stat(path)).isFile();
  } catch (error) {
    const code = errorCode(error);
    const reason = code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file' : errorText(error);
    throw new CliConfigError({
      code: 'CLI_CONFIG_NOT_FOUND',
      file,
      message: `cannot load config ${describeValue(file)}: ${reason} (looked at ${path})`,
      cause: error,
    });
  }
  if (!isFile) {
    throw new CliConfigError({
      code: 'CLI_CONFIG_NOT_FOUND',
      file,
      message: `cannot load config ${describeValue(file)}: it is not a file (${path})`,
    });
  }
}

let tsxRegistered = false;

/**
 * Registers tsx's ESM loader for the rest of the process (once), found in the project: from the
 * config's folder up, then from `cwd` up. Registered globally (not namespaced), so the config's
 * `.js` imports are the very modules the CLI imports.
 */
async function registerTsx(file: string, path: string, cwd: string): Promise<void> {
  if (tsxRegistered) return;
  const api = (await tsxApiPath(dirname(path))) ?? (await tsxApiPath(cwd));
  if (api === undefined) {
    throw new CliConfigError({
      code: 'CLI_CONFIG_UNLOADABLE',
      file,
      message: `cannot load config ${describeValue(file)}: a TypeScript module needs the tsx package, which is not installed in this project; install it (npm i -D tsx) or compile the config to .js and pass that`,
    });
  }
  try {
    const { register } = (await import(pathToFileURL(api).href)) as { register: () => unknown };
    register();
    tsxRegistered = true;
  } catch (error) {
    throw new CliConfigError({
      code: 'CLI_CONFIG_UNLOADABLE',
      file,
      message: `cannot load config ${describeValue(file)}: the tsx installed at ${api} could not be registered (${errorText(error)}); install tsx 4.x or compile the config to .js`,
      cause: error,
    });
  }
}

/** The ESM entry of `tsx/esm/api` as installed for `dir`, or `undefined`. */
async function tsxApiPath(dir: string): Promise<string | undefined> {
  let manifest: string;
  try {
    manifest = createRequire(join(dir, 'noop.js')).resolve('tsx/package.json');
  } catch {
    return undefined;
  }
  try {
    const pkg = JSON.parse(await readFile(manifest, 'utf8')) as {
      exports?: Record<string, { import?: { default?: string } | string } | string>;
    };
    const entry = pkg.exports?.['./esm/api'];
    const target = typeof entry === 'object' && typeof entry.import === 'object' ? entry.import.default : undefined;
    return target === undefined ? undefined : join(dirname(manifest), target);
  } catch {
    return undefined;
  }
}

function invalid(file: string, message: string): CliConfigError {
  return new CliConfigError({ code: 'CLI_CONFIG_INVALID', file, message });
}

function failed(file: string, message: string, cause: unknown): CliConfigError {
  return new CliConfigError({ code: 'CLI_CONFIG_FAILED', file, message, cause });
}

import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.ConfigError');

/** The code of {@link ConfigError} and of every subclass of it. */
export type ConfigErrorCode =
  /** A configuration (crew.yaml, routing TOML, runner options, a pipeline, an FSM, a store's options) is invalid; `problems` lists every problem with its path and, from a file, its line. Subclasses keep this code (the pipeline package's `PipelineConfigError`, thrown by `definePipeline`): tell them apart with their `isInstance`. Fix: correct each listed problem; `signalyard validate <file>` prints them for config files. */
  'CONFIG_INVALID';

/**
 * One problem found in a configuration.
 *
 * `path` uses the configuration's own keys, dotted, with `[i]` for list items
 * (`routing.bindings[2].match.peer.id`). `line` and `column` are 1-based and present when the
 * parser reports positions (YAML, TOML).
 */
export interface ConfigProblem {
  /** Where the problem is, in the configuration's own keys (`routing.bindings[2].match.peer.id`; `""` for the whole document). */
  readonly path: string;
  /** What is wrong and what was expected. */
  readonly message: string;
  /** The 1-based line in the file, when the parser knows it. */
  readonly line?: number;
  /** The 1-based column in that line, when the parser knows it. */
  readonly column?: number;
}

/**
 * A configuration is invalid (code `CONFIG_INVALID`). Thrown by every config loader and
 * validating constructor in Signalyard.
 *
 * {@link ConfigError.problems} lists **every** problem found, not just the first. Subclasses
 * (such as the pipeline package's `PipelineConfigError`) keep the code `CONFIG_INVALID`; tell
 * them apart with their own `isInstance`.
 *
 * @example
 * ```ts
 * try { parseCrewConfig(text) } catch (e) {
 *   if (ConfigError.isInstance(e)) for (const p of e.problems) console.error(`${p.line}: ${p.path}: ${p.message}`);
 * }
 * ```
 */
export class ConfigError extends SignalyardError<ConfigErrorCode> {
  private readonly [marker] = true;
  /** Every problem found, in the order found. */
  readonly problems: readonly ConfigProblem[];
  /** The file the configuration came from, when it came from a file. */
  readonly file?: string;

  constructor(options: { problems: readonly ConfigProblem[]; file?: string; message?: string; cause?: unknown }) {
    const problems = Object.freeze(options.problems.map((p) => Object.freeze({ ...p })));
    super({
      code: 'CONFIG_INVALID',
      message: options.message ?? formatConfigProblems(problems, options.file),
      cause: options.cause,
    });
    this.problems = problems;
    if (options.file !== undefined) this.file = options.file;
  }

  /** True when `error` is a `ConfigError` or a subclass, from any installed copy of core. */
  static override isInstance(error: unknown): error is ConfigError {
    return hasErrorMarker(error, marker);
  }
}

/**
 * Formats problems one per line as `file:line: path: message` (the file and line when known).
 * @internal
 */
function formatConfigProblems(problems: readonly ConfigProblem[], file?: string): string {
  const head =
    problems.length === 1
      ? 'Invalid configuration (1 problem):'
      : `Invalid configuration (${problems.length} problems):`;
  const lines = problems.map((p) => {
    const where = [file, p.line === undefined ? undefined : String(p.line)].filter((x) => x !== undefined).join(':');
    const path = p.path === '' ? '(root)' : p.path;
    return `  ${where === '' ? '' : `${where}: `}${path}: ${p.message}`;
  });
  return [head, ...lines].join('\n');
}

import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CliConfigError');

/** The codes of {@link CliConfigError}. */
export type CliConfigErrorCode =
  /** The `--config` module does not exist (or is not a file) (exit code 2). Fix: check the path; it is resolved against the current directory. */
  | 'CLI_CONFIG_NOT_FOUND'
  /** The `--config` module cannot be loaded by this Node.js: a `.ts` module without the `tsx` package installed in the project (or the current directory), or a file that is not a JavaScript module (exit code 2). Fix: install tsx (`npm i -D tsx`) or compile the config to `.js` / `.mjs` and pass that. */
  | 'CLI_CONFIG_UNLOADABLE'
  /** Loading the `--config` module threw (a syntax error, a failing import, an exception while it ran), or its exported function threw or rejected (exit code 2). The message carries the module's own error. Fix: run the module on its own (`node config.mjs`, `tsx config.ts`) and fix what it reports. */
  | 'CLI_CONFIG_FAILED'
  /** The `--config` module's default export is not `RunnerOptions` (an object) or a function returning them, or it lacks what the command needs (`approve` needs the `store` the app's runners use) (exit code 2). Fix: `export default { agents: [...], store }` or `export default async () => ({ agents: [...], store })`. */
  | 'CLI_CONFIG_INVALID';

/**
 * The runner configuration module named by `--config` could not be used (codes
 * {@link CliConfigErrorCode}): it is missing, cannot be loaded (a `.ts` module without `tsx`),
 * threw while loading, or does not export `RunnerOptions`. `run` prints its message as one line
 * on stderr and returns exit code 2.
 */
export class CliConfigError extends SignalyardError<CliConfigErrorCode> {
  private readonly [marker] = true;
  /** The module as given with `--config`. */
  readonly file: string;

  constructor(options: { code: CliConfigErrorCode; file: string; message: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    this.file = options.file;
  }

  /** True when `error` is a `CliConfigError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is CliConfigError {
    return hasErrorMarker(error, marker);
  }
}

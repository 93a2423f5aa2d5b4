import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CliUsageError');

/** The code of {@link CliUsageError}. */
export type CliUsageErrorCode =
  /** The command line was wrong: an unknown option or command, a missing argument, or a value an option does not accept (exit code 2). Fix: see `signalyard --help` and `signalyard <command> --help`. */
  'CLI_USAGE';

/**
 * The command line was wrong (code `CLI_USAGE`): an unknown option or command, a missing
 * argument, a value the option does not accept (a `--peer` without `kind:id`, a file whose kind
 * cannot be told from its extension). `run` prints its message as one line on stderr and
 * returns exit code 2.
 */
export class CliUsageError extends SignalyardError<CliUsageErrorCode> {
  private readonly [marker] = true;

  constructor(options: { message: string; cause?: unknown }) {
    super({ code: 'CLI_USAGE', message: options.message, cause: options.cause });
  }

  /** True when `error` is a `CliUsageError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is CliUsageError {
    return hasErrorMarker(error, marker);
  }
}

import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CliUsageError');

/**
 * The command line was wrong (code `CLI_USAGE`): an unknown option or command, a missing
 * argument, a value the option does not accept (a `--peer` without `kind:id`, a file whose kind
 * cannot be told from its extension). `run` prints its message as one line on stderr and
 * returns exit code 2.
 */
export class CliUsageError extends SignalyardError {
  private readonly [marker] = true;

  constructor(options: { message: string; cause?: unknown }) {
    super({ code: 'CLI_USAGE', message: options.message, cause: options.cause });
  }

  /** True when `error` is a `CliUsageError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is CliUsageError {
    return hasErrorMarker(error, marker);
  }
}

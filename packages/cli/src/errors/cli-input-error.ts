import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CliInputError');

/** The code of {@link CliInputError}. */
export type CliInputErrorCode =
  /** An input file could not be read: it does not exist, is a directory, cannot be opened, or is not UTF-8 text (exit code 2). Fix: check the path; save the file as UTF-8. */
  'CLI_INPUT_UNREADABLE';

/**
 * An input file could not be read (code `CLI_INPUT_UNREADABLE`): it does not exist, is a
 * directory, cannot be opened, or is not UTF-8 text. `run` prints its message as one line on
 * stderr and returns exit code 2 (a file that reads but holds an invalid configuration is exit
 * code 1 instead).
 */
export class CliInputError extends SignalyardError<CliInputErrorCode> {
  private readonly [marker] = true;
  /** The path as given on the command line. */
  readonly file: string;

  constructor(options: { file: string; message: string; cause?: unknown }) {
    super({ code: 'CLI_INPUT_UNREADABLE', message: options.message, cause: options.cause });
    this.file = options.file;
  }

  /** True when `error` is a `CliInputError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is CliInputError {
    return hasErrorMarker(error, marker);
  }
}

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describeValue } from '@signalyard/core';
import { CliInputError } from './errors/cli-input-error.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  ENOTDIR: 'no such file (a parent is not a directory)',
  EISDIR: 'it is a directory, not a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the path is too long',
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a whole file as UTF-8 text (a leading byte-order mark is dropped).
 *
 * @throws CliInputError (`CLI_INPUT_UNREADABLE`) naming the file as given when it is missing,
 *   a directory, not readable, or not valid UTF-8.
 */
export async function readTextFile(file: string, cwd: string): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(resolve(cwd, file));
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const reason = typeof code === 'string' ? (REASONS[code] ?? code) : String(error);
    throw new CliInputError({ file, message: `cannot read ${describeValue(file)}: ${reason}`, cause: error });
  }
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw new CliInputError({
      file,
      message: `cannot read ${describeValue(file)}: it is not UTF-8 text`,
      cause: error,
    });
  }
}

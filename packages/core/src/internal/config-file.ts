import { ConfigError } from '../errors/config-error.js';
import { describeValue } from '../signal.js';

/**
 * The file a config loader (`loadCrewConfig`, `loadRoutingConfig`) reads, from the argument its
 * caller gave: a non-empty path string as it is, or a `file:` URL (a `URL`, also one from another
 * realm) as a path. `toPath` is Node's `fileURLToPath`, passed in so core imports no Node module;
 * `what` names the file for the message (`'a crew.yaml'`).
 *
 * Nothing is read here: a number is not taken for a file descriptor, an `http:` URL fails
 * before any I/O.
 *
 * @throws ConfigError (`CONFIG_INVALID`, one problem at the root) naming the value and what was
 *   expected: for anything but a non-empty string or a `file:` URL, and for a `file:` URL that
 *   names no local path (`toPath` throws).
 */
export function configFilePath(path: unknown, toPath: (url: URL) => string, what: string): string {
  if (typeof path === 'string') {
    if (path !== '') return path;
    throw invalidPath('""', what, 'the path is empty');
  }
  const url = asUrl(path);
  if (url === undefined) throw invalidPath(describeValue(path), what, undefined);
  const shown = JSON.stringify(url.href);
  if (url.protocol !== 'file:') throw invalidPath(shown, what, `a ${url.protocol} URL names no file`);
  try {
    return toPath(url);
  } catch (error) {
    throw invalidPath(shown, what, error instanceof Error ? error.message : String(error), error);
  }
}

/** `value` as a `URL` when it is one (from this realm or another), else `undefined`. */
function asUrl(value: unknown): URL | undefined {
  if (value instanceof URL) return value;
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    const href = (value as { href?: unknown }).href;
    const protocol = (value as { protocol?: unknown }).protocol;
    if (typeof href !== 'string' || typeof protocol !== 'string') return undefined;
    return new URL(href);
  } catch {
    return undefined;
  }
}

function invalidPath(shown: string, what: string, why: string | undefined, cause?: unknown): ConfigError {
  const expected = 'expected a file path (a non-empty string) or a file: URL';
  const message = `Invalid path ${shown} for ${what}: ${expected}${why === undefined ? '' : ` (${why})`}`;
  return new ConfigError({
    problems: [{ path: '', message: `invalid path ${shown}: ${expected}${why === undefined ? '' : ` (${why})`}` }],
    message,
    ...(cause === undefined ? {} : { cause }),
  });
}

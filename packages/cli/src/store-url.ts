import { isAbsolute } from 'node:path';
import { describeValue } from '@signalyard/core';
import { CliStoreError } from './errors/cli-store-error.js';

/** A `--store` value, parsed: an SQLite file or a PostgreSQL connection string. */
export type StoreUrl =
  | {
      readonly kind: 'sqlite';
      /** The database file as given after `sqlite:` (relative paths resolve against the working directory). */
      readonly path: string;
      /** The value as given, for messages. */
      readonly shown: string;
    }
  | {
      readonly kind: 'postgres';
      /** The connection string as given. */
      readonly connectionString: string;
      /** The connection string with its password masked, for messages. */
      readonly shown: string;
    };

const EXPECTED = 'expected sqlite:<path> (e.g. sqlite:./sessions.db) or a postgres:// connection string';

/** `postgres://app:secret@db/x` → `postgres://app:***@db/x`; other text as it is. */
export function maskPassword(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):[^@/?#]*@/i, '$1:***@');
}

function invalid(value: string, problem: string): CliStoreError {
  const shown = maskPassword(value);
  return new CliStoreError({
    code: 'CLI_STORE_URL_INVALID',
    store: shown,
    message: `--store ${describeValue(shown)}: ${problem}`,
  });
}

/**
 * Parses `--store`: `sqlite:<path>` or `postgres://…` / `postgresql://…`.
 *
 * @throws CliStoreError `CLI_STORE_URL_INVALID` naming the value (password masked).
 */
export function parseStoreUrl(value: string): StoreUrl {
  const colon = value.indexOf(':');
  const scheme = colon < 0 ? '' : value.slice(0, colon).toLowerCase();
  if (scheme === 'sqlite') {
    const path = value.slice(colon + 1);
    if (path.trim() === '') throw invalid(value, `the SQLite file is missing: ${EXPECTED}`);
    if (path.startsWith('//') && !isAbsolute(path.slice(2))) {
      throw invalid(value, `write sqlite:<path> without "//" (sqlite:./sessions.db, or sqlite:/abs/path.db)`);
    }
    if (path === ':memory:') {
      throw invalid(value, 'an in-memory database holds no sessions for the command to read: name a file');
    }
    if (path.includes('\u0000')) throw invalid(value, 'the path holds a NUL character');
    return { kind: 'sqlite', path: path.startsWith('//') ? path.slice(2) : path, shown: value };
  }
  if (scheme === 'postgres' || scheme === 'postgresql') {
    if (!URL.canParse(value)) {
      throw invalid(value, 'not a URL: expected a connection string such as postgres://user@host:5432/database');
    }
    return { kind: 'postgres', connectionString: value, shown: maskPassword(value) };
  }
  if (value.trim() === '') throw invalid(value, `the store is empty: ${EXPECTED}`);
  throw invalid(value, scheme === '' ? EXPECTED : `unknown store type "${scheme}:": ${EXPECTED}`);
}

import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.SqliteSchemaVersionError');

/** The code of {@link SqliteSchemaVersionError}. */
export type SqliteSchemaVersionErrorCode =
  /** The database file was written by a newer `@signalyard/store-sqlite`: its schema version (the checkpoint tables', or the inbox tables' for a `SqliteInbox`) is above the one this release understands, so the store or inbox refuses to open it and changes nothing. Fix: upgrade `@signalyard/store-sqlite` to open the file. */
  'SQLITE_SCHEMA_UNSUPPORTED';

/**
 * The database file was written by a newer `@signalyard/store-sqlite` (code
 * `SQLITE_SCHEMA_UNSUPPORTED`): its schema version is above the one this release understands.
 * The store refuses to open it rather than guess, and changes nothing in the file; upgrade the
 * package to read it.
 *
 * @example
 * ```ts
 * try {
 *   new SqliteCheckpointStore({ path: 'sessions.db' });
 * } catch (error) {
 *   if (SqliteSchemaVersionError.isInstance(error)) console.error(`written by a newer release: schema ${error.found}`);
 * }
 * ```
 */
export class SqliteSchemaVersionError extends SignalyardError<SqliteSchemaVersionErrorCode> {
  private readonly [marker] = true;
  /** The database file. */
  readonly path: string;
  /** The schema version found in the file. */
  readonly found: number;
  /** The newest schema version this release can read. */
  readonly supported: number;

  constructor(options: {
    path: string;
    found: number;
    supported: number;
    /** What holds the schema, for the message: `Checkpoint database` (the default), `Inbox in database`. */
    subject?: string;
  }) {
    super({
      code: 'SQLITE_SCHEMA_UNSUPPORTED',
      message:
        `${options.subject ?? 'Checkpoint database'} ${JSON.stringify(options.path)} has schema version ${options.found}, ` +
        `expected ${options.supported} or lower: it was written by a newer @signalyard/store-sqlite; upgrade to open it`,
    });
    this.path = options.path;
    this.found = options.found;
    this.supported = options.supported;
  }

  /** True when `error` is a `SqliteSchemaVersionError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is SqliteSchemaVersionError {
    return hasErrorMarker(error, marker);
  }
}

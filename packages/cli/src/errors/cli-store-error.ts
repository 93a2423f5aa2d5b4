import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CliStoreError');

/** The codes of {@link CliStoreError}. */
export type CliStoreErrorCode =
  /** `--store` is not `sqlite:<path>` or a `postgres://` (or `postgresql://`) connection string, or names an option the store does not take, such as a bad `--table` (exit code 2). Fix: write `--store sqlite:./sessions.db` or `--store postgres://user@host:5432/db`. */
  | 'CLI_STORE_URL_INVALID'
  /** The store could not be opened: the SQLite file does not exist, is not a database or was written by a newer release; the PostgreSQL server does not answer, refuses the login, or has no checkpoint table (exit code 2). Fix: check the path or the connection string and `--table`; run `--migrate` on a database no runner has set up yet. */
  | 'CLI_STORE_UNAVAILABLE'
  /** The PostgreSQL checkpoint table has the schema of an earlier `@signalyard/store-postgres` (no history table): reading history and saving need `migrate()` first. Nothing was written (exit code 2). Fix: run the command again with `--migrate` (idempotent, safe while runners are up), or call `store.migrate()` from your deployment. */
  | 'CLI_STORE_SCHEMA_OUTDATED'
  /** A read or write of the store failed: the SQLite file stayed locked by another writer, the connection was lost, or a stored row was not written by a Signalyard store. A failed write writes nothing (exit code 2). Fix: read the message (it carries the store's own error); retry once the other writer is done. */
  | 'CLI_STORE_FAILED';

/**
 * `signalyard sessions` could not use the store named by `--store` (codes
 * {@link CliStoreErrorCode}). `run` prints its message as one line on stderr and returns exit
 * code 2. The message names the store with any password in the connection string masked.
 */
export class CliStoreError extends SignalyardError<CliStoreErrorCode> {
  private readonly [marker] = true;
  /** The store as given with `--store`, any password masked (`postgres://app:***@db/agents`). */
  readonly store: string;

  constructor(options: { code: CliStoreErrorCode; store: string; message: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    this.store = options.store;
  }

  /** True when `error` is a `CliStoreError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is CliStoreError {
    return hasErrorMarker(error, marker);
  }
}

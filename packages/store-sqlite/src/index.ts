/**
 * `@signalyard/store-sqlite`: a durable Signalyard `CheckpointStore` in one SQLite file, on the
 * `libsql` package (prebuilt binaries, no compiler). Sessions survive a restart, and a process
 * killed in the middle of a run loses at most the signal it was applying.
 *
 * @packageDocumentation
 */
export { SqliteCheckpointStore } from './sqlite-checkpoint-store.js';
export type { SqliteCheckpointStoreOptions, SqliteSynchronous } from './sqlite-checkpoint-store-options.js';
export { SQLITE_SCHEMA_VERSION } from './sqlite-schema.js';
export { SqliteSchemaVersionError } from './errors/sqlite-schema-version-error.js';
export type { SqliteSchemaVersionErrorCode } from './errors/sqlite-schema-version-error.js';
export { SqliteStoreError } from './errors/sqlite-store-error.js';
export type { SqliteStoreErrorCode } from './errors/sqlite-store-error.js';
export { SqliteInbox } from './sqlite-inbox.js';
export type { SqliteInboxOptions } from './sqlite-inbox-options.js';
export { SQLITE_INBOX_SCHEMA_VERSION } from './sqlite-inbox-schema.js';

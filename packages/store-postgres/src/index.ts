/**
 * `@signalyard/store-postgres`: a Signalyard `CheckpointStore` and a cross-process
 * `SessionLock` on PostgreSQL (`pg`), for runners on many machines serving the same sessions.
 *
 * @packageDocumentation
 */
export { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
export type {
  PostgresCheckpointStoreCommonOptions,
  PostgresCheckpointStoreConnectionOptions,
  PostgresCheckpointStoreOptions,
  PostgresCheckpointStorePoolOptions,
} from './postgres-checkpoint-store-options.js';
export { DEFAULT_CHECKPOINT_TABLE } from './postgres-table-name.js';
export { POSTGRES_SCHEMA_VERSION } from './postgres-schema.js';
export { PostgresSessionLock } from './postgres-session-lock.js';
export type {
  PostgresSessionLockClientOptions,
  PostgresSessionLockCommonOptions,
  PostgresSessionLockConnectionOptions,
  PostgresSessionLockOptions,
} from './postgres-session-lock-options.js';
export { PostgresStoreError } from './errors/postgres-store-error.js';
export type { PostgresStoreErrorCode } from './errors/postgres-store-error.js';
export { PostgresLockError } from './errors/postgres-lock-error.js';
export type { PostgresLockErrorCode } from './errors/postgres-lock-error.js';
export { PostgresInbox } from './postgres-inbox.js';
export { DEFAULT_INBOX_TABLE } from './postgres-inbox-options.js';
export type {
  PostgresInboxCommonOptions,
  PostgresInboxConnectionOptions,
  PostgresInboxOptions,
  PostgresInboxPoolOptions,
} from './postgres-inbox-options.js';
export { POSTGRES_INBOX_SCHEMA_VERSION } from './postgres-inbox-schema.js';

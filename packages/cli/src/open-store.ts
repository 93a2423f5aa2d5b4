import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError, SignalyardError, describeValue, type Checkpoint, type CheckpointStore } from '@signalyard/core';
import { errorCode, errorText } from '@signalyard/core/internal';
import { CliSessionError } from './errors/cli-session-error.js';
import { CliStoreError, type CliStoreErrorCode } from './errors/cli-store-error.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { maskPassword, parseStoreUrl, type StoreUrl } from './store-url.js';
import { isHistoryError } from './history-error.js';

/** The store options every `signalyard sessions` command takes. */
export interface StoreOptions {
  /** `--store`: `sqlite:<path>` or a `postgres://` connection string. */
  readonly store: string;
  /** `--table`: the PostgreSQL checkpoint table. */
  readonly table?: string;
  /** `--keep-versions`: versions kept before the current one (the store's default when absent). */
  readonly keepVersions?: number;
  /** `--migrate`: bring a PostgreSQL database to this release's schema first. */
  readonly migrate?: boolean;
}

/** A checkpoint store with history, as both SQL stores are. */
export interface HistoryStore extends CheckpointStore {
  history(key: string, opts?: { before?: number; limit?: number }): AsyncIterable<Checkpoint>;
  loadVersion(key: string, version: number): Promise<Checkpoint | undefined>;
}

/** An open store, the way messages name it, and how to close it. */
export interface OpenedStore {
  readonly store: HistoryStore;
  /** The store as given, password masked. */
  readonly shown: string;
  close(): Promise<void>;
}

/** How long a connection attempt to PostgreSQL may take before the command gives up. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens the store named by `--store` (the store packages are loaded only now, so the other
 * commands never load `libsql` or `pg`). An SQLite file must exist: the command never creates
 * an empty database for a mistyped path. With `migrate`, a PostgreSQL database is brought to
 * this release's schema (`PostgresCheckpointStore.migrate()`: idempotent, under an advisory lock).
 *
 * @throws CliStoreError; CliUsageError for `--table` with an SQLite store or a bad table name.
 */
export async function openStore(options: StoreOptions, cwd: string): Promise<OpenedStore> {
  const url = parseStoreUrl(options.store);
  if (url.kind === 'sqlite') {
    if (options.table !== undefined) {
      throw new CliUsageError({
        message: `--table ${describeValue(options.table)} applies to a postgres:// store only (an SQLite file has one checkpoint table)`,
      });
    }
    return openSqlite(url, options, cwd);
  }
  return openPostgres(url, options);
}

async function openSqlite(
  url: Extract<StoreUrl, { kind: 'sqlite' }>,
  options: StoreOptions,
  cwd: string,
): Promise<OpenedStore> {
  const file = resolve(cwd, url.path);
  let isFile: boolean;
  try {
    isFile = (await stat(file)).isFile();
  } catch (error) {
    const code = errorCode(error);
    const reason = code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file' : errorText(error);
    throw unavailable(url.shown, `cannot open ${describeValue(url.shown)}: ${reason}`, error);
  }
  if (!isFile) throw unavailable(url.shown, `cannot open ${describeValue(url.shown)}: it is not a file`);
  try {
    const { SqliteCheckpointStore } = await import('@signalyard/store-sqlite');
    const store = new SqliteCheckpointStore({
      path: file,
      ...(options.keepVersions !== undefined && { keepVersions: options.keepVersions }),
    });
    return { store, shown: url.shown, close: () => store.close() };
  } catch (error) {
    throw storeError(error, url.shown);
  }
}

async function openPostgres(url: Extract<StoreUrl, { kind: 'postgres' }>, options: StoreOptions): Promise<OpenedStore> {
  const [{ PostgresCheckpointStore }, { default: pg }] = await Promise.all([
    import('@signalyard/store-postgres'),
    import('pg'),
  ]);
  // A pool of our own, for its connection timeout: pg's default waits for ever on a host that
  // does not answer.
  const pool = new pg.Pool({
    connectionString: url.connectionString,
    max: 2,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  pool.on('error', () => undefined); // an idle connection the server closed: the next call reports
  const end = async (): Promise<void> => {
    await pool.end().catch(() => undefined);
  };
  let store: InstanceType<typeof PostgresCheckpointStore>;
  try {
    store = new PostgresCheckpointStore({
      pool,
      ...(options.table !== undefined && { table: options.table }),
      ...(options.keepVersions !== undefined && { keepVersions: options.keepVersions }),
    });
  } catch (error) {
    await end();
    const problem = ConfigError.isInstance(error) ? error.problems.find((p) => p.path === 'table') : undefined;
    if (problem !== undefined) {
      throw new CliUsageError({ message: `--table ${describeValue(options.table)}: ${problem.message}`, cause: error });
    }
    throw storeError(error, url.shown);
  }
  const close = async (): Promise<void> => {
    await store.close().catch(() => undefined);
    await end();
  };
  if (options.migrate === true) {
    try {
      await store.migrate();
    } catch (error) {
      await close();
      throw storeError(error, url.shown);
    }
  }
  return { store, shown: url.shown, close };
}

function unavailable(shown: string, message: string, cause?: unknown): CliStoreError {
  return new CliStoreError({ code: 'CLI_STORE_UNAVAILABLE', store: shown, message, cause });
}

/**
 * PostgreSQL error classes that mean "could not get a working connection": connection, login,
 * database. (A socket error's code, `ECONNREFUSED` and the like, starts with `E`, which no
 * SQLSTATE class does; a connection timeout has no code.)
 */
const UNREACHABLE_PG = /^(08|28|3D)/;

/**
 * A store's error as the CLI's: the store's own message, prefixed with what failed and the store
 * (password masked). CLI errors pass through; anything that is not a Signalyard error is a bug
 * and passes through too.
 */
export function storeError(error: unknown, shown: string): unknown {
  if (
    CliStoreError.isInstance(error) ||
    CliSessionError.isInstance(error) ||
    CliUsageError.isInstance(error) ||
    isHistoryError(error)
  ) {
    return error;
  }
  if (!SignalyardError.isInstance(error)) return error;
  const pgCode = (error as { pgCode?: unknown }).pgCode;
  const text = maskPassword(error.message);
  const store = describeValue(shown);
  const make = (code: CliStoreErrorCode, message: string): CliStoreError =>
    new CliStoreError({ code, store: shown, message, cause: error });
  switch (error.code) {
    case 'SCHEMA_OUTDATED':
      return make(
        'CLI_STORE_SCHEMA_OUTDATED',
        `${store} has the checkpoint schema of an earlier @signalyard/store-postgres: run the command again with --migrate (idempotent, safe while runners are up). ${text}`,
      );
    case 'SQLITE_OPEN_FAILED':
    case 'SQLITE_SCHEMA_UNSUPPORTED':
    case 'POSTGRES_SCHEMA_UNSUPPORTED':
    case 'POSTGRES_MIGRATE_FAILED':
      return make('CLI_STORE_UNAVAILABLE', `cannot open ${store}: ${text}`);
    case 'POSTGRES_OPERATION_FAILED':
      if (pgCode === '42P01') {
        return make(
          'CLI_STORE_UNAVAILABLE',
          `${store} has no checkpoint table ${String((error as { table?: unknown }).table)}: no runner has migrated this database (check --table, or pass --migrate to create it). ${text}`,
        );
      }
      if (typeof pgCode !== 'string' || pgCode.startsWith('E') || UNREACHABLE_PG.test(pgCode)) {
        return make('CLI_STORE_UNAVAILABLE', `cannot reach ${store}: ${text}`);
      }
      return make('CLI_STORE_FAILED', `${store}: ${text}`);
    default:
      return make('CLI_STORE_FAILED', `${store}: ${text}`);
  }
}

import { ConfigError, describeValue, systemClock, type Clock, type ConfigProblem } from '@signalyard/core';
import { DEFAULT_KEEP_VERSIONS, clockProblem, isClock, keepVersionsProblem } from '@signalyard/core/internal';
import { Pool } from 'pg';
import { DEFAULT_CHECKPOINT_TABLE, parseTableName, type TableName } from './postgres-table-name.js';

/** What every form of {@link PostgresCheckpointStoreOptions} accepts. */
export interface PostgresCheckpointStoreCommonOptions {
  /**
   * The checkpoint table: `name` or `schema.name`, lower-case letters, digits and `_` (at most
   * 63 characters per part). Default `signalyard_checkpoints`, in the connection's
   * `search_path`. `migrate()` creates it, and next to it the history table `<table>_history`.
   */
  table?: string;
  /**
   * How many versions before the current one each key keeps for `history` and `loadVersion`.
   * Default 20; 0 keeps the current version only. Each save drops the versions beyond it in the
   * same statement. Processes with different values may share a table: each save prunes to the
   * saving store's value, and each store lists at most its own.
   */
  keepVersions?: number;
  /**
   * Whether the store's statements are named prepared statements, parsed and planned once per
   * connection instead of with every call. Default `true` (about twice the saves per second on a
   * loopback server). Set `false` behind a pooler that cannot keep prepared statements between
   * transactions: PgBouncer in transaction mode, unless it is 1.21 or later with
   * `max_prepared_statements` above 0 (the default only from 1.24).
   */
  preparedStatements?: boolean;
  /**
   * Where the store reads the time each save is stamped with (`updated_at`, kept with the
   * version in the history): sent with the save, which keeps a key's `updated_at` from going
   * backwards (`greatest` of the clock's time and the stored one). Default `systemClock`
   * (`Date.now()` of this process). A Runner's store should share the Runner's clock, so that
   * one clock stamps everything a session records.
   */
  clock?: Clock;
}

/** Options of a store that shares a `pg.Pool` you own: the store never ends it. */
export interface PostgresCheckpointStorePoolOptions extends PostgresCheckpointStoreCommonOptions {
  /** A `pg` pool; the store borrows a connection per call and never ends the pool. */
  pool: Pool;
  /** Not with `pool`. */
  connectionString?: undefined;
  /** Not with `pool`: size your own pool. */
  maxConnections?: undefined;
}

/** Options of a store that opens (and on `close()` ends) a pool of its own. */
export interface PostgresCheckpointStoreConnectionOptions extends PostgresCheckpointStoreCommonOptions {
  /** A PostgreSQL URL, e.g. `postgres://app@db.internal:5432/agents`. */
  connectionString: string;
  /** The most connections the store's pool opens at once. Default 10 (`pg`'s default). */
  maxConnections?: number;
  /** Not with `connectionString`. */
  pool?: undefined;
}

/**
 * Options of {@link PostgresCheckpointStore}: exactly one of `pool` (shared, yours to end) or
 * `connectionString` (the store opens a pool and ends it on `close()`), and an optional
 * `table`, `keepVersions`, `preparedStatements` and `clock`. Unknown keys are refused (a typo must not pass silently), with every other problem,
 * in one `ConfigError`.
 *
 * @example
 * ```ts
 * const options: PostgresCheckpointStoreOptions = { connectionString: process.env.DATABASE_URL!, table: 'agents.checkpoints', maxConnections: 5, keepVersions: 50 };
 * const store = new PostgresCheckpointStore(options);
 * ```
 */
export type PostgresCheckpointStoreOptions =
  PostgresCheckpointStorePoolOptions | PostgresCheckpointStoreConnectionOptions;

/** Validated options. @internal */
export interface ResolvedPostgresStoreOptions {
  readonly table: TableName;
  readonly keepVersions: number;
  /** The pool to use, and whether the store created it (and so ends it). */
  readonly pool: Pool;
  readonly ownsPool: boolean;
  readonly preparedStatements: boolean;
  readonly clock: Clock;
}

const KNOWN = new Set([
  'pool',
  'connectionString',
  'maxConnections',
  'table',
  'keepVersions',
  'preparedStatements',
  'clock',
]);
const SHAPE =
  '{ pool } or { connectionString, maxConnections? }, with an optional table, keepVersions, preparedStatements and clock';

/** True for a `pg.Pool` (from any installed copy of `pg`) or anything that behaves as one. */
function isPoolLike(value: unknown): value is Pool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { query?: unknown }).query === 'function' &&
    typeof (value as { connect?: unknown }).connect === 'function'
  );
}

/**
 * Validates store options, reporting every problem at once, and opens the pool when given a
 * connection string (`pg` connects lazily: nothing touches the network here).
 * @throws ConfigError `CONFIG_INVALID`.
 * @internal
 */
export function resolvePostgresStoreOptions(options: PostgresCheckpointStoreOptions): ResolvedPostgresStoreOptions {
  if (typeof options !== 'object' || (options as unknown) === null || Array.isArray(options)) {
    throw new ConfigError({
      problems: [{ path: '', message: `expected store options ${SHAPE}, got ${describeValue(options)}` }],
    });
  }
  const problems: ConfigProblem[] = [];
  const {
    pool,
    connectionString,
    maxConnections,
    table = DEFAULT_CHECKPOINT_TABLE,
    keepVersions = DEFAULT_KEEP_VERSIONS,
    preparedStatements = true,
    clock = systemClock,
  } = options as {
    pool?: unknown;
    connectionString?: unknown;
    maxConnections?: unknown;
    table?: unknown;
    keepVersions?: unknown;
    preparedStatements?: unknown;
    clock?: unknown;
  };
  problems.push(...connectionProblems(pool, connectionString, maxConnections));
  const parsed = parseTableName(table);
  if (typeof parsed === 'string') problems.push({ path: 'table', message: parsed });
  const keepProblem = keepVersionsProblem(keepVersions);
  if (keepProblem !== undefined) problems.push({ path: 'keepVersions', message: keepProblem });
  if (typeof preparedStatements !== 'boolean')
    problems.push({
      path: 'preparedStatements',
      message: `expected true or false, got ${describeValue(preparedStatements)}`,
    });
  if (!isClock(clock)) problems.push({ path: 'clock', message: clockProblem(clock) });
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key))
      problems.push({
        path: key,
        message: `unknown option ${JSON.stringify(key)} (known: ${[...KNOWN].join(', ')})`,
      });
  }
  if (problems.length > 0) throw new ConfigError({ problems });
  const tableName = parsed as TableName;
  const common = {
    table: tableName,
    keepVersions: keepVersions as number,
    preparedStatements: preparedStatements as boolean,
    clock: clock as Clock,
  };
  if (pool !== undefined) return { ...common, pool: pool as Pool, ownsPool: false };
  const own = openOwnPool(connectionString as string, maxConnections as number | undefined);
  return { ...common, pool: own, ownsPool: true };
}

/**
 * A pool of its own for a store or inbox given a connection string (`max` connections, default
 * 10). `pg` connects lazily: nothing touches the network here.
 * @internal
 */
export function openOwnPool(connectionString: string, max: number | undefined): Pool {
  const own = new Pool({ connectionString, max: max ?? 10 });
  // An idle connection that the server closes (restart, pg_terminate_backend) makes the pool emit
  // 'error'; unheard, that event would crash the process. The pool drops the connection and
  // opens another on the next call, whose failure (if any) that call reports.
  own.on('error', () => undefined);
  return own;
}

/** What is wrong with how the options say to connect: exactly one of `pool` or `connectionString`, and `maxConnections` only with the latter. @internal */
export function connectionProblems(pool: unknown, connectionString: unknown, maxConnections: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (pool !== undefined && connectionString !== undefined) {
    problems.push({ path: 'pool', message: 'expected exactly one of pool or connectionString, got both' });
  } else if (pool === undefined && connectionString === undefined) {
    problems.push({
      path: 'pool',
      message: 'expected exactly one of pool (a pg.Pool) or connectionString (a postgres:// URL), got neither',
    });
  }
  if (pool !== undefined && !isPoolLike(pool)) {
    problems.push({ path: 'pool', message: `expected a pg.Pool, got ${describeValue(pool)}` });
  }
  if (connectionString !== undefined && (typeof connectionString !== 'string' || connectionString.trim() === '')) {
    problems.push({
      path: 'connectionString',
      message: `expected a PostgreSQL connection string such as "postgres://user@host:5432/db", got ${describeValue(connectionString)}`,
    });
  }
  if (maxConnections !== undefined) {
    if (pool !== undefined) {
      problems.push({
        path: 'maxConnections',
        message:
          'maxConnections applies to the pool the store opens from connectionString; size your own pool with its max option',
      });
    } else if (typeof maxConnections !== 'number' || !Number.isSafeInteger(maxConnections) || maxConnections < 1) {
      problems.push({
        path: 'maxConnections',
        message: `expected an integer >= 1, got ${describeValue(maxConnections)}`,
      });
    }
  }
  return problems;
}

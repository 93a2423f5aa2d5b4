import { ConfigError, describeValue, type ConfigProblem } from '@signalyard/core';
import {
  INBOX_LIMIT_OPTIONS,
  isRecord,
  msOptionProblem,
  resolveInboxLimits,
  unknownOptionProblems,
  type InboxLimits,
} from '@signalyard/core/internal';
import type { Pool } from 'pg';
import { connectionProblems, openOwnPool } from './postgres-checkpoint-store-options.js';
import { parseTableName, type TableName } from './postgres-table-name.js';

/** The entries table a {@link PostgresInbox} uses when given no `table` option (its other tables are named after it). */
export const DEFAULT_INBOX_TABLE = 'signalyard_inbox';

/** What every form of {@link PostgresInboxOptions} accepts. */
export interface PostgresInboxCommonOptions {
  /**
   * The entries table: `name` or `schema.name`, lower-case letters, digits and `_` (at most 63
   * characters per part). Default `signalyard_inbox`. The inbox's other tables, its sequence and
   * its function are named after it (`<table>_keys`, `<table>_outcomes`, …; see the guide).
   */
  table?: string;
  /**
   * How often to look for outcomes, stream events and notices while the `LISTEN` connection is
   * down (after it comes back, one look catches up on what was missed), and — ten times slower —
   * while it is up, in case a notification was lost. Milliseconds; default 1,000.
   */
  pollMs?: number;
  /**
   * A PostgreSQL URL for the inbox's `LISTEN` connection alone, opened with a `pg.Client` of its
   * own instead of taking one of the pool's. `LISTEN` needs a session: give this when the pool goes
   * through a PgBouncer in transaction mode, pointing at the server directly (or at a PgBouncer in
   * session mode), e.g. `postgres://app@db.internal:5432/agents`. Default: one of the pool's connections.
   */
  listenConnectionString?: string;
  /** Named prepared statements (default `true`), as for `PostgresCheckpointStore`; `false` behind a pooler that cannot keep them. */
  preparedStatements?: boolean;
  /** How many entries one session may have waiting (not yet acknowledged) before `accept` refuses with `INBOX_FULL`. Default 1,000. */
  maxPendingPerSession?: number;
  /** How many entries the inbox may have waiting before `accept` refuses with `INBOX_FULL` (a bound concurrent accepts may pass by a few). Default 100,000. */
  maxPending?: number;
  /** How long an accepted `id` is remembered (a retry returns the first receipt), in milliseconds. Default 600,000 (10 minutes). */
  dedupeWindowMs?: number;
  /** The `retryAfterMs` an `INBOX_FULL` error carries, in milliseconds. Default 1,000. */
  retryAfterMs?: number;
}

/** Options of an inbox that shares a `pg.Pool` you own: the inbox never ends it (its `LISTEN` connection is one of the pool's, held while anything waits, unless `listenConnectionString` gives it its own). */
export interface PostgresInboxPoolOptions extends PostgresInboxCommonOptions {
  /** A `pg` pool. */
  pool: Pool;
  /** Not with `pool`. */
  connectionString?: undefined;
  /** Not with `pool`: size your own pool. */
  maxConnections?: undefined;
}

/** Options of an inbox that opens (and on `close()` ends) a pool of its own. */
export interface PostgresInboxConnectionOptions extends PostgresInboxCommonOptions {
  /** A PostgreSQL URL, e.g. `postgres://app@db.internal:5432/agents`. */
  connectionString: string;
  /** The most connections the inbox's pool opens at once, its `LISTEN` connection included (unless `listenConnectionString` gives it its own). Default 10. */
  maxConnections?: number;
  /** Not with `connectionString`. */
  pool?: undefined;
}

/**
 * Options of {@link PostgresInbox}: exactly one of `pool` (shared, yours to end) or
 * `connectionString` (the inbox opens a pool and ends it on `close()`), an optional `table`,
 * `pollMs`, `preparedStatements`, `listenConnectionString` and the limits. Unknown keys are refused (a typo must not pass
 * silently), with every other problem, in one `ConfigError`.
 *
 * @example
 * ```ts
 * const options: PostgresInboxOptions = { connectionString: process.env.DATABASE_URL!, table: 'agents.inbox', maxPendingPerSession: 100 };
 * const inbox = new PostgresInbox(options);
 * ```
 */
export type PostgresInboxOptions = PostgresInboxPoolOptions | PostgresInboxConnectionOptions;

/** Validated options. @internal */
export interface ResolvedPostgresInboxOptions extends InboxLimits {
  readonly table: TableName;
  readonly pool: Pool;
  readonly ownsPool: boolean;
  readonly pollMs: number;
  readonly preparedStatements: boolean;
  /** The `LISTEN` connection's own URL, when it is not one of the pool's. */
  readonly listenConnectionString: string | undefined;
}

const KNOWN = [
  'pool',
  'connectionString',
  'maxConnections',
  'table',
  'pollMs',
  'preparedStatements',
  'listenConnectionString',
  ...INBOX_LIMIT_OPTIONS,
];

/**
 * Validates inbox options, reporting every problem at once, and opens the pool when given a
 * connection string (`pg` connects lazily: nothing touches the network here).
 * @throws ConfigError `CONFIG_INVALID`.
 * @internal
 */
export function resolvePostgresInboxOptions(options: PostgresInboxOptions): ResolvedPostgresInboxOptions {
  if (!isRecord(options)) {
    throw new ConfigError({
      problems: [
        {
          path: '',
          message: `expected inbox options { pool } or { connectionString, … }, got ${describeValue(options)}`,
        },
      ],
    });
  }
  const problems: ConfigProblem[] = [];
  const {
    pool,
    connectionString,
    maxConnections,
    table = DEFAULT_INBOX_TABLE,
    pollMs = 1000,
    preparedStatements = true,
    listenConnectionString,
  } = options;
  problems.push(...connectionProblems(pool, connectionString, maxConnections));
  const parsed = parseTableName(table);
  if (typeof parsed === 'string') problems.push({ path: 'table', message: parsed });
  msOptionProblem(options, 'pollMs', problems);
  if (typeof preparedStatements !== 'boolean') {
    problems.push({
      path: 'preparedStatements',
      message: `expected true or false, got ${describeValue(preparedStatements)}`,
    });
  }
  if (
    listenConnectionString !== undefined &&
    (typeof listenConnectionString !== 'string' || listenConnectionString.trim() === '')
  ) {
    problems.push({
      path: 'listenConnectionString',
      message: `expected a PostgreSQL connection string such as "postgres://user@host:5432/db" (a session, not a transaction-mode pooler), got ${describeValue(listenConnectionString)}`,
    });
  }
  const limits = resolveInboxLimits(options, problems);
  unknownOptionProblems(options, KNOWN, problems);
  if (problems.length > 0) throw new ConfigError({ problems });
  const common = { ...limits, table: parsed as TableName, pollMs, preparedStatements, listenConnectionString };
  if (pool !== undefined) return { ...common, pool, ownsPool: false };
  return { ...common, pool: openOwnPool(connectionString, maxConnections), ownsPool: true };
}

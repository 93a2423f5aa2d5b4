import { ConfigError, describeValue, systemClock, type Clock, type ConfigProblem } from '@signalyard/core';
import { DEFAULT_KEEP_VERSIONS, clockProblem, isClock, keepVersionsProblem } from '@signalyard/core/internal';

/** How hard SQLite works to keep a committed save through a power loss (`PRAGMA synchronous`). */
export type SqliteSynchronous = 'normal' | 'full' | 'extra';

/**
 * Options of {@link SqliteCheckpointStore}. Unknown keys are refused (a typo must not pass
 * silently), with every other problem, in one `ConfigError`.
 *
 * @example
 * ```ts
 * const options: SqliteCheckpointStoreOptions = { path: '/var/lib/bot/sessions.db', synchronous: 'full', busyTimeoutMs: 10_000, keepVersions: 50 };
 * const store = new SqliteCheckpointStore(options);
 * ```
 */
export interface SqliteCheckpointStoreOptions {
  /**
   * The database file, created if missing (its directory must exist); relative paths resolve
   * against the working directory. `':memory:'` keeps checkpoints in this process only (a fresh,
   * private database per store; no WAL).
   */
  path: string;
  /**
   * How long a save waits for another process's write lock on the same file before failing
   * with `SQLITE_OPERATION_FAILED` (`sqliteCode` `SQLITE_BUSY`). Milliseconds; default 5000.
   */
  busyTimeoutMs?: number;
  /**
   * `PRAGMA synchronous`. Default `'normal'`: in WAL mode a committed save survives the process
   * being killed (`kill -9`); the last few saves may be lost on a power cut or kernel crash.
   * `'full'` (or `'extra'`) syncs the WAL on every commit and survives those too, at the cost of
   * one fsync per save.
   */
  synchronous?: SqliteSynchronous;
  /**
   * How many versions before the current one each key keeps for `history` and `loadVersion`.
   * Default 20; 0 keeps the current version only. Each save drops the versions beyond it in the
   * same transaction. Stores with different values may share a file: each save prunes to the
   * saving store's value, and each store lists at most its own.
   */
  keepVersions?: number;
  /**
   * Where the store reads the time each save is stamped with (`updated_at` of the checkpoint,
   * kept with it in the history). Default `systemClock` (`Date.now()`). A Runner's store should
   * share the Runner's clock, so that one clock stamps everything a session records.
   */
  clock?: Clock;
}

/** Validated options with defaults filled in. @internal */
export interface ResolvedSqliteOptions {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly synchronous: SqliteSynchronous;
  readonly keepVersions: number;
  readonly clock: Clock;
}

const KNOWN = new Set(['path', 'busyTimeoutMs', 'synchronous', 'keepVersions', 'clock']);
const SYNCHRONOUS: readonly string[] = ['normal', 'full', 'extra'];

/**
 * What is wrong with the options of a SQLite file that the checkpoint store and the inbox share:
 * `path`, `busyTimeoutMs`, `synchronous`.
 * @internal
 */
export function sqliteFileProblems(path: unknown, busyTimeoutMs: unknown, synchronous: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (typeof path !== 'string' || path === '') {
    problems.push({ path: 'path', message: `expected a database file path or ":memory:", got ${describeValue(path)}` });
  } else if (path.includes('\u0000')) {
    problems.push({ path: 'path', message: `expected a file path without NUL characters, got ${describeValue(path)}` });
  }
  if (typeof busyTimeoutMs !== 'number' || !Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    problems.push({
      path: 'busyTimeoutMs',
      message: `expected an integer number of milliseconds >= 0, got ${describeValue(busyTimeoutMs)}`,
    });
  }
  if (!SYNCHRONOUS.includes(synchronous as string)) {
    problems.push({
      path: 'synchronous',
      message: `expected one of "normal", "full", "extra", got ${describeValue(synchronous)}`,
    });
  }
  return problems;
}

/**
 * Validates store options, reporting every problem at once.
 * @throws ConfigError `CONFIG_INVALID`.
 * @internal
 */
export function resolveSqliteOptions(options: SqliteCheckpointStoreOptions): ResolvedSqliteOptions {
  if (typeof options !== 'object' || (options as unknown) === null || Array.isArray(options)) {
    throw new ConfigError({
      problems: [
        {
          path: '',
          message: `expected store options { path, busyTimeoutMs?, synchronous?, keepVersions?, clock? }, got ${describeValue(options)}`,
        },
      ],
    });
  }
  const problems: ConfigProblem[] = [];
  const {
    path,
    busyTimeoutMs = 5000,
    synchronous = 'normal',
    keepVersions = DEFAULT_KEEP_VERSIONS,
    clock = systemClock,
  } = options as Partial<SqliteCheckpointStoreOptions>;
  problems.push(...sqliteFileProblems(path, busyTimeoutMs, synchronous));
  const keepProblem = keepVersionsProblem(keepVersions);
  if (keepProblem !== undefined) problems.push({ path: 'keepVersions', message: keepProblem });
  if (!isClock(clock)) problems.push({ path: 'clock', message: clockProblem(clock) });
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key))
      problems.push({
        path: key,
        message: `unknown option ${JSON.stringify(key)} (known: path, busyTimeoutMs, synchronous, keepVersions, clock)`,
      });
  }
  if (problems.length > 0) throw new ConfigError({ problems });
  return { path: path as string, busyTimeoutMs, synchronous, keepVersions, clock };
}

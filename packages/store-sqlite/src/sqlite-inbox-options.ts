import { ConfigError, describeValue, type ConfigProblem } from '@signalyard/core';
import {
  INBOX_LIMIT_OPTIONS,
  isRecord,
  msOptionProblem,
  resolveInboxLimits,
  unknownOptionProblems,
  type InboxLimits,
} from '@signalyard/core/internal';
import { sqliteFileProblems, type SqliteSynchronous } from './sqlite-checkpoint-store-options.js';

/**
 * Options of {@link SqliteInbox}. Unknown keys are refused (a typo must not pass silently), with
 * every other problem, in one `ConfigError`.
 *
 * @example
 * ```ts
 * const options: SqliteInboxOptions = { path: '/var/lib/bot/sessions.db', pollMs: 50, maxPendingPerSession: 100 };
 * const inbox = new SqliteInbox(options);
 * ```
 */
export interface SqliteInboxOptions {
  /**
   * The database file, created if missing (its directory must exist): the checkpoint store's
   * file, or one of its own. Every process on the machine that opens it shares the inbox.
   * `':memory:'` gives a private inbox in this process only (for tests).
   */
  path: string;
  /** How long a write waits for another process's write lock on the file before failing with `INBOX_UNAVAILABLE`. Milliseconds; default 5000. */
  busyTimeoutMs?: number;
  /** `PRAGMA synchronous`, as for `SqliteCheckpointStore`. Default `'normal'`: an accepted entry survives `kill -9`; `'full'` also a power cut. */
  synchronous?: SqliteSynchronous;
  /**
   * How often, while anything waits (an `outcome()`, an `events()` read, an `onNotify`
   * listener), the inbox looks for what other processes wrote: outcomes, stream events, notices,
   * new entries. Milliseconds; default 100. Calls within this process are seen at once.
   */
  pollMs?: number;
  /** How many entries one session may have waiting (not yet acknowledged) before `accept` refuses with `INBOX_FULL`. Default 1,000. */
  maxPendingPerSession?: number;
  /** How many entries the file may have waiting before `accept` refuses with `INBOX_FULL`. Default 100,000. */
  maxPending?: number;
  /** How long an accepted `id` is remembered (a retry returns the first receipt), in milliseconds. Default 600,000 (10 minutes). */
  dedupeWindowMs?: number;
  /** The `retryAfterMs` an `INBOX_FULL` error carries, in milliseconds. Default 1,000. */
  retryAfterMs?: number;
}

/** Validated options with defaults filled in. @internal */
export interface ResolvedSqliteInboxOptions extends InboxLimits {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly synchronous: SqliteSynchronous;
  readonly pollMs: number;
}

const KNOWN = ['path', 'busyTimeoutMs', 'synchronous', 'pollMs', ...INBOX_LIMIT_OPTIONS];

/**
 * Validates inbox options, reporting every problem at once.
 * @throws ConfigError `CONFIG_INVALID`.
 * @internal
 */
export function resolveSqliteInboxOptions(options: SqliteInboxOptions): ResolvedSqliteInboxOptions {
  if (!isRecord(options)) {
    throw new ConfigError({
      problems: [
        { path: '', message: `expected inbox options { ${KNOWN.join(', ')} }, got ${describeValue(options)}` },
      ],
    });
  }
  const problems: ConfigProblem[] = [];
  const limits = resolveInboxLimits(options, problems);
  const { path, busyTimeoutMs = 5000, synchronous = 'normal', pollMs = 100 } = options as Partial<SqliteInboxOptions>;
  problems.push(...sqliteFileProblems(path, busyTimeoutMs, synchronous));
  msOptionProblem(options, 'pollMs', problems);
  unknownOptionProblems(options, KNOWN, problems);
  if (problems.length > 0) throw new ConfigError({ problems });
  return { ...limits, path: path as string, busyTimeoutMs, synchronous, pollMs };
}

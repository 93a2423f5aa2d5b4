import { ConfigError, describeValue, type ConfigProblem } from '@signalyard/core';
import { MAX_TIMEOUT_MS } from '@signalyard/core/internal';
import type { Client } from 'pg';

/** How long `withLock` waits for a lock by default: 2 minutes. */
const DEFAULT_ACQUIRE_TIMEOUT_MS = 120_000;

/** What every form of {@link PostgresSessionLockOptions} accepts. */
export interface PostgresSessionLockCommonOptions {
  /**
   * The first pause, in milliseconds, before trying a held lock again. Each retry doubles it
   * up to `retryMaxMs`, and every pause is jittered (between half and all of it) so that
   * waiting processes do not poll in step. Default 5.
   */
  retryMinMs?: number;
  /** The longest pause between two tries, in milliseconds. Default 250. */
  retryMaxMs?: number;
  /**
   * How long `withLock` waits for a lock held elsewhere (by another process, or by an earlier
   * call for the key in this process) before rejecting with `POSTGRES_LOCK_TIMEOUT`, in
   * milliseconds: an integer from 0 to 2147483647 (a free lock is always taken, even with 0), or
   * `Infinity` for no limit (wait until it is free or the call's `abortSignal` fires). Default
   * 120000 (2 minutes): longer than a turn should last, so a holder that hangs — a stuck engine
   * in another process — fails the waiting signals instead of keeping them forever.
   */
  acquireTimeoutMs?: number;
}

/** Options of a lock that opens (and on `close()` ends) its own connection. */
export interface PostgresSessionLockConnectionOptions extends PostgresSessionLockCommonOptions {
  /**
   * A PostgreSQL URL. The lock opens one connection from it on first use (`application_name`
   * `signalyard-session-lock`), and opens a new one on the next call if the server or the
   * network drops it.
   */
  connectionString: string;
  /** Not with `connectionString`. */
  client?: undefined;
}

/** Options of a lock on a `pg.Client` you own. */
export interface PostgresSessionLockClientOptions extends PostgresSessionLockCommonOptions {
  /**
   * A `pg.Client` of its own (not a pooled one, and not used for anything else): the locks live
   * as long as its session. Connect it before the first `withLock`; the lock never ends it. If
   * the connection is lost, later calls reject with `POSTGRES_LOCK_FAILED`.
   */
  client: Client;
  /** Not with `client`. */
  connectionString?: undefined;
}

/**
 * Options of {@link PostgresSessionLock}: exactly one of `connectionString` (the lock owns its
 * connection) or `client` (yours), plus the retry timing. Unknown keys are refused with every
 * other problem in one `ConfigError`.
 *
 * @example
 * ```ts
 * const options: PostgresSessionLockOptions = { connectionString: process.env.DATABASE_URL!, retryMaxMs: 100, acquireTimeoutMs: 30_000 };
 * const lock = new PostgresSessionLock(options);
 * ```
 */
export type PostgresSessionLockOptions = PostgresSessionLockConnectionOptions | PostgresSessionLockClientOptions;

/** Validated options. @internal */
export interface ResolvedPostgresLockOptions {
  readonly connectionString: string | undefined;
  readonly client: Client | undefined;
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  /** `undefined`: no limit. */
  readonly acquireTimeoutMs: number | undefined;
}

const KNOWN = new Set(['connectionString', 'client', 'retryMinMs', 'retryMaxMs', 'acquireTimeoutMs']);
const SHAPE = '{ connectionString } or { client }, with optional retryMinMs, retryMaxMs, acquireTimeoutMs';

function isClientLike(value: unknown): value is Client {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { query?: unknown }).query === 'function' &&
    typeof (value as { on?: unknown }).on === 'function' &&
    typeof (value as { removeListener?: unknown }).removeListener === 'function'
  );
}

const isMs = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/**
 * Validates lock options, reporting every problem at once.
 * @throws ConfigError `CONFIG_INVALID`.
 * @internal
 */
export function resolvePostgresLockOptions(options: PostgresSessionLockOptions): ResolvedPostgresLockOptions {
  if (typeof options !== 'object' || (options as unknown) === null || Array.isArray(options)) {
    throw new ConfigError({
      problems: [{ path: '', message: `expected lock options ${SHAPE}, got ${describeValue(options)}` }],
    });
  }
  const problems: ConfigProblem[] = [];
  const {
    connectionString,
    client,
    retryMinMs = 5,
    retryMaxMs = 250,
    acquireTimeoutMs = DEFAULT_ACQUIRE_TIMEOUT_MS,
  } = options as unknown as Record<string, unknown>;
  if (client !== undefined && connectionString !== undefined) {
    problems.push({ path: 'client', message: 'expected exactly one of connectionString or client, got both' });
  } else if (client === undefined && connectionString === undefined) {
    problems.push({
      path: 'connectionString',
      message: 'expected exactly one of connectionString (a postgres:// URL) or client (a pg.Client), got neither',
    });
  }
  if (connectionString !== undefined && (typeof connectionString !== 'string' || connectionString.trim() === '')) {
    problems.push({
      path: 'connectionString',
      message: `expected a PostgreSQL connection string such as "postgres://user@host:5432/db", got ${describeValue(connectionString)}`,
    });
  }
  if (client !== undefined && !isClientLike(client)) {
    problems.push({ path: 'client', message: `expected a pg.Client, got ${describeValue(client)}` });
  }
  const minOk = isMs(retryMinMs) && retryMinMs >= 1;
  if (!minOk)
    problems.push({
      path: 'retryMinMs',
      message: `expected an integer number of milliseconds >= 1, got ${describeValue(retryMinMs)}`,
    });
  if (!isMs(retryMaxMs) || retryMaxMs < 1) {
    problems.push({
      path: 'retryMaxMs',
      message: `expected an integer number of milliseconds >= 1, got ${describeValue(retryMaxMs)}`,
    });
  } else if (minOk && retryMaxMs < retryMinMs) {
    problems.push({
      path: 'retryMaxMs',
      message: `expected retryMaxMs >= retryMinMs (${retryMinMs}), got ${retryMaxMs}`,
    });
  }
  if (acquireTimeoutMs !== Infinity && (!isMs(acquireTimeoutMs) || acquireTimeoutMs > MAX_TIMEOUT_MS)) {
    problems.push({
      path: 'acquireTimeoutMs',
      message: `expected an integer number of milliseconds from 0 to ${MAX_TIMEOUT_MS}, or Infinity for no limit, got ${describeValue(acquireTimeoutMs)}`,
    });
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key))
      problems.push({ path: key, message: `unknown option ${JSON.stringify(key)} (known: ${[...KNOWN].join(', ')})` });
  }
  if (problems.length > 0) throw new ConfigError({ problems });
  return {
    connectionString: connectionString as string | undefined,
    client: client as Client | undefined,
    retryMinMs: retryMinMs as number,
    retryMaxMs: retryMaxMs as number,
    acquireTimeoutMs: acquireTimeoutMs === Infinity ? undefined : (acquireTimeoutMs as number),
  };
}

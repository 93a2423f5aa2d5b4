import type { Client } from 'pg';

// The one connection a PostgresSessionLock takes its advisory locks on: what is known about it,
// and its queries, sent one at a time.

/** The lock connection and what is known about it. @internal */
export interface LockConnection {
  readonly client: Client;
  /** True when the lock opened it (and so reopens and ends it). */
  readonly owned: boolean;
  /** Settles when the connection is open. */
  readonly ready: Promise<unknown>;
  /** Set when the connection failed or ended: the server has released every lock it held. */
  lost: boolean;
  /** Settles when the last query sent settles: queries go one at a time (pg 9 will not queue them). */
  tail: Promise<unknown>;
  /** The calls running `fn` on this connection: told (with `pg`'s error, if any) when it is lost. */
  readonly holders: Set<(cause: unknown) => void>;
  readonly detach: () => void;
}

/** Takes the advisory lock of a key, if it is free: one row, one column, `true` when taken. */
export const TRY_LOCK = 'SELECT pg_try_advisory_lock(hashtextextended($1, 0))';
/** Releases the advisory lock of a key. */
export const UNLOCK = 'SELECT pg_advisory_unlock(hashtextextended($1, 0))';

/** Runs one query with `key` as its parameter on the connection, after the ones already sent. @internal */
export function serially<T>(connection: LockConnection, text: string, key: string): Promise<T> {
  const run = (): Promise<T> => connection.client.query({ text, values: [key], rowMode: 'array' }) as Promise<T>;
  const result = connection.tail.then(run, run);
  connection.tail = result.catch(() => undefined);
  return result;
}

/** Reads `lost` afresh (it changes across awaits, when the connection fails). @internal */
export function isLost(connection: LockConnection): boolean {
  return connection.lost;
}

/**
 * Follows a client's life: marks it lost when it fails or ends, and tells the calls holding locks
 * on it. Also keeps an 'error' on an idle connection (the server went away) from crashing the
 * process. @internal
 */
export function watch(client: Client, owned: boolean, ready: Promise<unknown>): LockConnection {
  const onGone = (error?: unknown): void => {
    connection.lost = true;
    const holders = [...connection.holders];
    connection.holders.clear();
    for (const holder of holders) holder(error);
  };
  const connection: LockConnection = {
    client,
    owned,
    ready,
    lost: false,
    tail: Promise.resolve(),
    holders: new Set(),
    detach: () => {
      client.removeListener('error', onGone);
      client.removeListener('end', onGone);
    },
  };
  client.on('error', onGone);
  client.on('end', onGone);
  return connection;
}

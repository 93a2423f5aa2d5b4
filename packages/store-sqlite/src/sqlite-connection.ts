import { resolve } from 'node:path';
import Database from 'libsql';
import type { SqliteSynchronous } from './sqlite-checkpoint-store-options.js';
import { SqliteWriteBatch } from './sqlite-write-batch.js';

/** How a connection is set up: users with the same settings on the same file share one. */
interface SqliteConnectionSettings {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly synchronous: SqliteSynchronous;
}

/**
 * One user's handle on a connection to a SQLite file: the `libsql` database and its group
 * commit (every write goes through `batch`, reads flush it first). Released once by `close()`.
 * @internal
 */
export interface SqliteConnection {
  readonly db: Database.Database;
  readonly batch: SqliteWriteBatch;
  /**
   * Writes what this user's batch holds, then lets the connection go; the last user closes it.
   * @throws what SQLite throws on close (the handle is released all the same).
   */
  close(): void;
}

interface Shared {
  readonly db: Database.Database;
  readonly batch: SqliteWriteBatch;
  users: number;
}

/** The open file connections of this process, by file and settings. */
const open = new Map<string, Shared>();

/**
 * A connection to `settings.path`, shared by every `SqliteCheckpointStore` and `SqliteInbox` of
 * this process that opens the same file with the same settings (a private `:memory:` database is
 * never shared). Sharing is what lets a worker's save and its inbox writes commit in one
 * transaction, and it spares each connection re-reading the pages another one changed (SQLite
 * drops a connection's page cache whenever another connection has committed). Each user runs
 * `prepare` (its schema) on it, under the file's rules; when `prepare` throws, the handle is
 * released and the error propagates.
 * @throws what `new Database` or `prepare` throws.
 * @internal
 */
export function openSqliteConnection(
  settings: SqliteConnectionSettings,
  prepare: (db: Database.Database) => void,
): SqliteConnection {
  const id =
    settings.path === ':memory:'
      ? undefined
      : `${resolve(settings.path)}\u0000${String(settings.busyTimeoutMs)}\u0000${settings.synchronous}`;
  let shared = id === undefined ? undefined : open.get(id);
  if (shared === undefined) {
    const db = new Database(settings.path);
    shared = { db, batch: new SqliteWriteBatch(db), users: 0 };
    if (id !== undefined) open.set(id, shared);
  }
  shared.users++;
  const handle = connectionHandle(shared, id);
  try {
    prepare(shared.db);
  } catch (error) {
    try {
      handle.close();
    } catch {
      // the prepare error is the one to report
    }
    throw error;
  }
  return handle;
}

function connectionHandle(shared: Shared, id: string | undefined): SqliteConnection {
  let closed = false;
  return {
    db: shared.db,
    batch: shared.batch,
    close: () => {
      if (closed) return;
      closed = true;
      shared.batch.flush(); // the writes asked for before close() are written
      if (--shared.users > 0) return;
      if (id !== undefined && open.get(id) === shared) open.delete(id);
      shared.db.close();
    },
  };
}

import type { InboxEntry, InboxLease } from '@signalyard/core';
import { compareInboxSeq } from '@signalyard/core/internal';
import { entryOf, type EntryRow } from './sqlite-inbox-rows.js';
import type { InboxStatements } from './sqlite-inbox-statements.js';
import type { SqliteWriteBatch } from './sqlite-write-batch.js';

/** How many entries a page of `read` takes at a time. @internal */
const READ_PAGE = 100;

/** A row of `leasedAfter`: the lease's expiry, and an entry's columns (all `null` when none is left). */
type LeasedRow = { readonly data_version: number; readonly lease_expires: number } & (
  EntryRow | { readonly [K in keyof EntryRow]: null }
);

/** What the last short page of a lease found: no entry after `through`, as of the key's mark and the file's `data_version` then. */
interface Known {
  readonly through: string;
  readonly mark: number;
  readonly dataVersion: number;
  readonly leaseExpires: number;
}

/** How many marks a connection keeps: keys share them by hash (a shared mark only costs a look). */
const MARKS = 4096;

/**
 * Per connection (its write batch): marks moved by every write that adds entries to a session key
 * or moves its lease, the key's mark chosen by hash — a fixed size, however many keys the process
 * sees.
 */
const marksOf = new WeakMap<SqliteWriteBatch, Uint32Array>();

/** The index of `key`'s mark (FNV-1a of its UTF-16 code units). */
function slotOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % MARKS;
}

/**
 * Records, in the write that does it, that `key` got entries or its lease moved (an accept, an
 * acquire, a release): pages of it known empty are read again. @internal
 */
export function markKey(batch: SqliteWriteBatch, key: string): void {
  let marks = marksOf.get(batch);
  if (marks === undefined) {
    marks = new Uint32Array(MARKS);
    marksOf.set(batch, marks);
  }
  const slot = slotOf(key);
  marks[slot] = ((marks[slot] ?? 0) + 1) >>> 0;
}

/**
 * The pages of `SqliteInbox.read`: one statement per page, the lease checked in it. A page that
 * came back short (no entry left) is remembered with what could change that: the key's mark
 * (this connection's writes adding entries to the key or moving its lease, {@link markKey}) and
 * SQLite's `data_version` (what any other connection committed). The next page of the lease
 * after it, while neither moved and the lease has not expired by the clock, is known to be empty
 * without a look: a read's last page, and a worker's look once its entries are finished,
 * usually cost no statement.
 * @internal
 */
export class SqliteLeaseReader {
  readonly #s: InboxStatements;
  readonly #batch: SqliteWriteBatch;
  readonly #known = new WeakMap<InboxLease, Known>();

  constructor(statements: InboxStatements, batch: SqliteWriteBatch) {
    this.#s = statements;
    this.#batch = batch;
  }

  /** The lease's entries after `after` (at most {@link READ_PAGE}); `undefined` when the lease is not held. Runs after the batch's flush. */
  page(lease: InboxLease, after: string): InboxEntry[] | undefined {
    const now = Date.now();
    const mark = marksOf.get(this.#batch)?.[slotOf(lease.key)] ?? 0;
    const known = this.#known.get(lease);
    if (
      known?.mark === mark &&
      now < known.leaseExpires &&
      compareInboxSeq(after, known.through) >= 0 &&
      known.dataVersion === this.#dataVersion()
    )
      return [];
    const rows = this.#s.leasedAfter.all({
      after,
      key: lease.key,
      token: lease.token,
      now,
      limit: READ_PAGE,
    }) as LeasedRow[];
    const first = rows[0];
    if (first === undefined) {
      this.#known.delete(lease);
      return undefined;
    }
    const entries = first.receipt_id === null ? [] : (rows as EntryRow[]).map(entryOf);
    if (entries.length < READ_PAGE) {
      const through = entries.at(-1)?.seq ?? after;
      this.#known.set(lease, { through, mark, dataVersion: first.data_version, leaseExpires: first.lease_expires });
    } else {
      this.#known.delete(lease);
    }
    return entries;
  }

  #dataVersion(): number {
    return (this.#s.dataVersion.get() as [dataVersion: number])[0];
  }
}

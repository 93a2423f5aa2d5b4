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

/**
 * What a connection knows of a leased key's entries without a look: `entries` are every entry of
 * the key after the `seq` `base`, as of the file's `dataVersion` (what other connections had
 * committed) plus what this connection wrote since — kept up to date by its commits.
 */
interface Tail {
  readonly token: string;
  readonly dataVersion: number;
  readonly leaseExpires: number;
  readonly base: string;
  entries: InboxEntry[];
}

/** How many entries a tail keeps at most (more: forgotten, the next page looks). */
const MAX_TAIL = 1000;
/** How many keys' tails a connection keeps at most (more: all forgotten). */
const MAX_TAILS = 10_000;

/**
 * Per connection (its write batch): what its reads of leased keys found, kept up to date by its
 * own commits — an accept adds its entry, a settle or an acknowledgement removes one, a counted
 * delivery updates `attempts`, an acquire or a release of the key forgets the key. Anything
 * another connection commits moves SQLite's `data_version`, which every page compares.
 * @internal
 */
export class OwnEntries {
  readonly #tails = new Map<string, Tail>();

  /** Called after the commit of an accept of `key` through this connection; `made` builds the entry. */
  added(key: string, made: () => InboxEntry): void {
    const tail = this.#tails.get(key);
    if (tail === undefined) return;
    if (tail.entries.length >= MAX_TAIL) this.#tails.delete(key);
    else tail.entries.push(made());
  }

  /** Called after the commit of a settle or an acknowledgement that removed the entry. */
  removed(key: string, receiptId: string): void {
    const tail = this.#tails.get(key);
    if (tail === undefined) return;
    const at = tail.entries.findIndex((e) => e.receiptId === receiptId);
    if (at >= 0) tail.entries.splice(at, 1);
  }

  /** Called after the commit of a delivery counted (`attempts`). */
  delivered(key: string, receiptId: string, attempts: number): void {
    const tail = this.#tails.get(key);
    if (tail === undefined) return;
    const at = tail.entries.findIndex((e) => e.receiptId === receiptId);
    const entry = tail.entries[at];
    if (entry !== undefined) tail.entries[at] = { ...entry, attempts };
  }

  /** In a write that moves `key`'s lease (acquire, release): the next page of it looks. */
  moved(key: string): void {
    this.#tails.delete(key);
  }

  /** The tail of `lease`'s key, if kept under that lease. */
  get(lease: InboxLease): Tail | undefined {
    const tail = this.#tails.get(lease.key);
    return tail?.token === lease.token ? tail : undefined;
  }

  set(key: string, tail: Tail | undefined): void {
    if (tail === undefined) {
      this.#tails.delete(key);
      return;
    }
    if (this.#tails.size >= MAX_TAILS && !this.#tails.has(key)) this.#tails.clear();
    this.#tails.set(key, tail);
  }
}

const ownOf = new WeakMap<SqliteWriteBatch, OwnEntries>();

/** The {@link OwnEntries} of a connection (its write batch), shared by every inbox on it. @internal */
export function ownEntriesOf(batch: SqliteWriteBatch): OwnEntries {
  let own = ownOf.get(batch);
  if (own === undefined) {
    own = new OwnEntries();
    ownOf.set(batch, own);
  }
  return own;
}

/**
 * The pages of `SqliteInbox.read`. A page that came back short (every entry of the key after
 * `after`) is kept as the key's tail ({@link OwnEntries}), which this connection's commits keep up
 * to date. A later page of the lease is served from the tail while the lease has not expired by
 * the clock and no other connection committed since (SQLite's `data_version`, one cheap
 * statement): a worker reading the entries its own process accepted pays no query of them.
 * Otherwise one statement reads the page with the lease checked in it.
 * @internal
 */
export class SqliteLeaseReader {
  readonly #s: InboxStatements;
  readonly #own: OwnEntries;

  constructor(statements: InboxStatements, batch: SqliteWriteBatch) {
    this.#s = statements;
    this.#own = ownEntriesOf(batch);
  }

  /** The lease's entries after `after` (at most {@link READ_PAGE}); `undefined` when the lease is not held. Runs after the batch's flush. */
  page(lease: InboxLease, after: string): InboxEntry[] | undefined {
    const now = Date.now();
    const tail = this.#own.get(lease);
    if (
      tail !== undefined &&
      now < tail.leaseExpires &&
      compareInboxSeq(after, tail.base) >= 0 &&
      tail.dataVersion === this.#dataVersion()
    ) {
      const entries = tail.entries;
      let from = 0;
      while (from < entries.length && compareInboxSeq((entries[from] as InboxEntry).seq, after) <= 0) from++;
      return entries.slice(from, from + READ_PAGE);
    }
    const rows = this.#s.leasedAfter.all({
      after,
      key: lease.key,
      token: lease.token,
      now,
      limit: READ_PAGE,
    }) as LeasedRow[];
    const first = rows[0];
    if (first === undefined) {
      this.#own.set(lease.key, undefined);
      return undefined;
    }
    const entries = first.receipt_id === null ? [] : (rows as EntryRow[]).map(entryOf);
    this.#own.set(
      lease.key,
      entries.length < READ_PAGE
        ? {
            token: lease.token,
            dataVersion: first.data_version,
            leaseExpires: first.lease_expires,
            base: after,
            entries: entries.slice(),
          }
        : undefined,
    );
    return entries;
  }

  #dataVersion(): number {
    return (this.#s.dataVersion.get() as [dataVersion: number])[0];
  }
}

import {
  SignalyardError,
  type Inbox,
  type InboxAcceptEntry,
  type InboxDeadLetter,
  type InboxEntry,
  type InboxLease,
  type InboxLeaseInfo,
  type InboxNotice,
  type InboxReceipt,
  type InboxSettleEvents,
  type InboxStreamEvent,
  type InboxStreamRef,
  type InspectableInbox,
  type OutcomeJson,
  type TurnEvent,
} from '@signalyard/core';
import {
  checkPendingOptions,
  inboxOutcome,
  readLeased,
  assertAcquire,
  assertAttempt,
  assertEntry,
  assertInboxId,
  assertInboxKey,
  assertLease,
  assertNotice,
  assertTtl,
  checkAccept,
  checkEventsArgs,
  checkLimit,
  entrySettledError,
  inboxClosedError,
  inboxFullError,
  isoAt,
  leaseLostError,
  outcomeText,
  checkSettle,
  readEventLog,
  turnEventText,
  turnEventTexts,
  type EventPage,
  type OutcomeLookup,
} from '@signalyard/core/internal';
import {
  resolveSqliteInboxOptions,
  type ResolvedSqliteInboxOptions,
  type SqliteInboxOptions,
} from './sqlite-inbox-options.js';
import { hasInboxTables, prepareInboxSchema } from './sqlite-inbox-schema.js';
import { acceptStatements, acceptedEntry } from './sqlite-inbox-accept.js';
import { acquireStatements, beginDeliveryStatements, releaseStatements } from './sqlite-inbox-leases.js';
import { ackStatements, putOutcomeStatements, settleStatements } from './sqlite-inbox-settle.js';
import { prepareInboxStatements, type InboxStatements } from './sqlite-inbox-statements.js';
import { entryOf, openFailed, unavailable, type EntryRow } from './sqlite-inbox-rows.js';
import type { SqliteWriteBatch } from './sqlite-write-batch.js';
import { openSqliteConnection, type SqliteConnection } from './sqlite-connection.js';
import { SqliteInboxWaits } from './sqlite-inbox-waits.js';
import { SqliteLeaseReader, ownEntriesOf, type OwnEntries } from './sqlite-inbox-read.js';
import { PROCESS_ORIGIN } from './sqlite-inbox-watch.js';

const NAME = 'SqliteInbox';
/** How often (ms) a write also drops what expired, at most. */
const SWEEP_MS = 1000;
/** How long notices are kept for pollers that look late (ms). */
const NOTICE_KEEP_MS = 60_000;

/**
 * The durable inbox on SQLite (inbox.md): accepted signals wait in a file until a worker settles
 * them, exactly once and in `seq` order per session key, and several processes on one machine
 * share the file — producers and workers alike. The embedded choice for a single durable
 * server; it passes `inboxConformance`.
 *
 * - **Where.** Eight tables beside the checkpoint store's (`inbox_entries`, `inbox_keys`,
 *   `inbox_dedupe`, `inbox_outcomes`, `inbox_dead`, `inbox_events`, `inbox_notices`,
 *   `inbox_meta`), in the store's file or one of their own; their schema version
 *   (`SQLITE_INBOX_SCHEMA_VERSION`) is kept in `inbox_meta`, created or migrated when the inbox
 *   opens the file (a newer one is refused). The scaling-out guide shows their layout.
 * - **`seq`** is allocated per session key in the accepting transaction (the entry inserted with
 *   the key's `last_seq + 1`, which a trigger then records, under SQLite's write lock), so
 *   accepts commit in `seq` order and a later `seq` is never visible before an earlier one.
 * - **Leases** live in `inbox_keys`, judged by this machine's clock; `attempts` are counted by
 *   `beginDelivery` in the file. Outcomes (`putOutcome`'s TTL) and dedupe ids
 *   (`dedupeWindowMs`) are swept once expired, stream events with their outcome.
 * - **Waiting** (`outcome()`, `events()`, `onNotify`) is served at once for what this process
 *   writes, and by polling the file every `pollMs` for what other processes write.
 *
 * Every call runs synchronously on the connection (libsql); failures are `InboxError`s
 * (`INBOX_UNAVAILABLE` with SQLite's code in the message, for a busy or broken file). Never put
 * the file on a network file system.
 *
 * @throws ConfigError `CONFIG_INVALID` listing every bad option; SqliteSchemaVersionError
 * `SQLITE_SCHEMA_UNSUPPORTED` for inbox tables of a newer release; SqliteStoreError
 * `SQLITE_OPEN_FAILED` when the file cannot be opened or holds foreign tables under the inbox's names.
 * @example
 * ```ts
 * import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
 *
 * const store = new SqliteCheckpointStore({ path: 'agents.db' });
 * const inbox = new SqliteInbox({ path: 'agents.db' });   // same file, tables of its own
 * const runner = createRunner({ agents, store, inbox, worker: true });
 * ```
 */
export class SqliteInbox implements Inbox, InspectableInbox {
  /** `true`: accepted entries survive the process (and `kill -9`). */
  readonly durable = true;
  /** The database file, as given. */
  readonly path: string;
  readonly #options: ResolvedSqliteInboxOptions;
  #conn: SqliteConnection | undefined;
  readonly #s: InboxStatements;
  readonly #batch: SqliteWriteBatch;
  readonly #waits: SqliteInboxWaits;
  readonly #reader: SqliteLeaseReader;
  /** What this connection's reads found of leased keys, kept up to date by its commits. */
  readonly #own: OwnEntries;
  /** The lease token each entry handed out by `read` was read under. */
  readonly #readUnder = new WeakMap<InboxEntry, string>();
  #lastSweep = Number.NEGATIVE_INFINITY;

  /** Throws `INBOX_CLOSED` once closed (a field, so that it can be handed to the shared helpers). */
  readonly #open = (): void => {
    if (this.#conn === undefined) throw inboxClosedError(NAME);
  };

  /**
   * Whether the SQLite file at `path` already holds an inbox (the tables a `SqliteInbox` creates,
   * of any schema version), read without changing the file — unlike `new SqliteInbox({ path })`,
   * which creates the tables where missing. A path that does not exist is `false` (no file is
   * created). For operator tools that show an inbox only where one is: `signalyard inspect
   * --store sqlite:<file>` shows the file's inbox this way.
   * @throws SqliteStoreError `SQLITE_OPEN_FAILED` when `path` cannot be read as a database (a
   * directory, a file that is not SQLite); ConfigError `CONFIG_INVALID` for a `path` that is not
   * a non-empty string.
   * @example
   * ```ts
   * const inbox = SqliteInbox.existsIn('sessions.db') ? new SqliteInbox({ path: 'sessions.db' }) : undefined;
   * ```
   */
  static existsIn(path: string): boolean {
    const resolved = resolveSqliteInboxOptions({ path });
    return hasInboxTables(resolved.path, resolved.busyTimeoutMs);
  }

  constructor(options: SqliteInboxOptions) {
    const resolved = resolveSqliteInboxOptions(options);
    this.#options = resolved;
    this.path = resolved.path;
    let statements: InboxStatements | undefined;
    let conn: SqliteConnection;
    try {
      conn = openSqliteConnection(resolved, (db) => {
        prepareInboxSchema(db, resolved);
        statements = prepareInboxStatements(db);
      });
    } catch (error) {
      if (SignalyardError.isInstance(error)) throw error;
      throw openFailed(resolved.path, error);
    }
    this.#conn = conn;
    this.#s = statements as InboxStatements;
    this.#batch = conn.batch;
    this.#reader = new SqliteLeaseReader(this.#s, conn.batch);
    this.#own = ownEntriesOf(conn.batch);
    this.#waits = new SqliteInboxWaits(resolved.path, this.#s, resolved.pollMs, () => this.#conn !== undefined);
  }

  /** See `Inbox.accept`. */
  async accept(entry: InboxAcceptEntry): Promise<InboxReceipt> {
    this.#open();
    const input = checkAccept(entry);
    const { sessionKey } = input;
    const now = Date.now();
    const s = this.#s;
    const { maxPendingPerSession, maxPending, retryAfterMs } = this.#options;
    this.#sweep(now); // in the same group commit
    const result = await this.#write(
      `accept an entry for session ${JSON.stringify(sessionKey)}`,
      () => acceptStatements(s, input, now, this.#options),
      (written) => {
        if (typeof written === 'object' && 'fresh' in written)
          this.#own.added(sessionKey, () => acceptedEntry(input, written));
      },
    );
    if (result === 'session') throw inboxFullError(sessionKey, 'session', maxPendingPerSession, retryAfterMs);
    if (result === 'inbox') throw inboxFullError(sessionKey, 'inbox', maxPending, retryAfterMs);
    if (!('fresh' in result)) return result;
    this.#waits.notice(sessionKey, 'entry');
    return {
      receiptId: result.receiptId,
      sessionKey: result.sessionKey,
      seq: result.seq,
      acceptedAt: result.acceptedAt,
    };
  }

  /** See `Inbox.acquire`. */
  async acquire(workerId: string, opts: { leaseMs: number; max: number }): Promise<InboxLease[]> {
    this.#open();
    assertAcquire(workerId, opts);
    const now = Date.now();
    return this.#write(`acquire leases for worker ${JSON.stringify(workerId)}`, () => {
      const leases = acquireStatements(this.#s, workerId, now, opts);
      for (const lease of leases) this.#own.moved(lease.key);
      return leases;
    });
  }

  /** See `Inbox.renew`. */
  async renew(lease: InboxLease): Promise<boolean> {
    this.#open();
    assertLease(lease);
    return this.#write(`renew the lease on ${JSON.stringify(lease.key)}`, () => {
      return this.#s.renew.run({ now: Date.now(), key: lease.key, token: lease.token }).changes === 1;
    });
  }

  /** See `Inbox.release`. */
  async release(lease: InboxLease): Promise<void> {
    this.#open();
    assertLease(lease);
    const now = Date.now();
    const waiting = await this.#write(`release the lease on ${JSON.stringify(lease.key)}`, () => {
      this.#own.moved(lease.key);
      return releaseStatements(this.#s, lease, now);
    });
    if (waiting) this.#waits.notice(lease.key, 'entry');
  }

  /** See `Inbox.read`. */
  read(lease: InboxLease, afterSeq?: string): AsyncIterable<InboxEntry> {
    const page = (after: string): InboxEntry[] | undefined =>
      this.#run(`read the entries of ${JSON.stringify(lease.key)}`, () => this.#reader.page(lease, after));
    return readLeased(this.#open, lease, afterSeq, page, this.#readUnder);
  }

  /** See `Inbox.beginDelivery`. */
  async beginDelivery(entry: InboxEntry): Promise<number> {
    this.#open();
    assertEntry(entry);
    const token = this.#readUnder.get(entry) ?? null;
    const counted = await this.#write(
      `count a delivery of ${JSON.stringify(entry.receiptId)}`,
      () => beginDeliveryStatements(this.#s, entry.receiptId, token, Date.now()),
      (attempts) => {
        if (typeof attempts === 'number') this.#own.delivered(entry.sessionKey, entry.receiptId, attempts);
      },
    );
    if (counted === 'settled') throw entrySettledError(entry.receiptId);
    if (counted === 'lost')
      throw leaseLostError(entry.sessionKey, 'it expired or was taken over before the delivery began');
    return counted;
  }

  /** See `Inbox.ack`. */
  async ack(entry: InboxEntry): Promise<void> {
    this.#open();
    assertEntry(entry);
    const now = Date.now();
    this.#sweep(now);
    const removed = await this.#write(
      `acknowledge ${JSON.stringify(entry.receiptId)}`,
      () => ackStatements(this.#s, entry.receiptId, now),
      (gone) => {
        if (gone) this.#own.removed(entry.sessionKey, entry.receiptId);
      },
    );
    if (removed) this.#waits.wake(entry.receiptId);
  }

  /** See `Inbox.putOutcome`. */
  async putOutcome(receiptId: string, outcome: OutcomeJson, ttlMs: number): Promise<void> {
    this.#open();
    assertInboxId(receiptId, 'receipt id');
    assertTtl(ttlMs);
    const text = outcomeText(receiptId, outcome);
    const now = Date.now();
    const expires = now + ttlMs;
    this.#sweep(now);
    const stored = await this.#write(`store the outcome of ${JSON.stringify(receiptId)}`, () =>
      putOutcomeStatements(this.#s, receiptId, outcome, text, now, expires),
    );
    if (stored) this.#waits.wake(receiptId);
  }

  /** See `Inbox.settle`: the last events, the outcome and the acknowledgement in one write (one transaction). */
  async settle(entry: InboxEntry, outcome: OutcomeJson, ttlMs: number, events?: InboxSettleEvents): Promise<void> {
    this.#open();
    const checked = checkSettle(entry, outcome, ttlMs, events);
    const now = Date.now();
    this.#sweep(now);
    const what = `settle ${JSON.stringify(checked.receiptId)}`;
    const written = await this.#write(
      what,
      () => settleStatements(this.#s, checked, now, ttlMs),
      (done) => {
        if (done.removed) this.#own.removed(entry.sessionKey, checked.receiptId);
      },
    );
    if (written.stored || written.removed) this.#waits.wake(checked.receiptId);
  }

  /** See `Inbox.outcome`. */
  outcome(receiptId: string, opts?: { abortSignal?: AbortSignal; timeoutMs?: number }): Promise<OutcomeJson> {
    return inboxOutcome(this.#open, receiptId, opts, (id) => this.#lookup(id), this.#waits.wakeups);
  }

  #lookup(receiptId: string): OutcomeLookup {
    this.#open();
    return this.#run(`read the outcome of ${JSON.stringify(receiptId)}`, () => {
      const row = this.#s.liveOutcome.get(receiptId, Date.now()) as { outcome: string } | undefined;
      if (row !== undefined) return { outcome: JSON.parse(row.outcome) as OutcomeJson };
      return this.#s.entryExists.get(receiptId) === undefined ? 'gone' : 'pending';
    });
  }

  /** See `Inbox.publish`. */
  publish(receiptId: string, attempt: number, event: TurnEvent): Promise<void> {
    return this.#append(receiptId, attempt, () => [turnEventText(event)]);
  }

  /** See `Inbox.publishMany`: every event in one write transaction. */
  publishMany(receiptId: string, attempt: number, events: readonly TurnEvent[]): Promise<void> {
    return this.#append(receiptId, attempt, () => turnEventTexts(events));
  }

  async #append(receiptId: string, attempt: number, made: () => string[]): Promise<void> {
    this.#open();
    assertInboxId(receiptId, 'receipt id');
    assertAttempt(attempt);
    const texts = made();
    if (texts.length === 0) return;
    const added = await this.#write(`publish events of ${JSON.stringify(receiptId)}`, () => {
      if (this.#s.publish.run(receiptId, attempt, texts[0], receiptId).changes !== 1) return false;
      for (let i = 1; i < texts.length; i++) this.#s.publish.run(receiptId, attempt, texts[i], receiptId);
      return true;
    });
    if (!added) throw entrySettledError(receiptId);
    this.#waits.wake(receiptId);
  }

  /** See `Inbox.events`. */
  async *events(
    ref: InboxStreamRef,
    opts?: { from?: string; abortSignal?: AbortSignal },
  ): AsyncGenerator<InboxStreamEvent, void, undefined> {
    this.#open();
    const args = checkEventsArgs(ref, opts);
    const s = this.#s;
    yield* readEventLog(
      {
        page: (receiptId, after, limit): EventPage => {
          this.#open();
          return this.#run(`read the events of ${JSON.stringify(receiptId)}`, () => {
            const live = s.entryExists.get(receiptId) !== undefined; // before the rows: see EventPage
            const rows = s.eventsAfter.all(receiptId, after ?? '0', limit) as {
              event_offset: string;
              attempt: number;
              event: string;
            }[];
            return { live, rows: rows.map((r) => ({ offset: r.event_offset, attempt: r.attempt, text: r.event })) };
          });
        },
        inFlight: (sessionKey) =>
          this.#run(`find the stream of session ${JSON.stringify(sessionKey)}`, () => {
            return (s.inFlight.get(sessionKey) as { receipt_id: string } | undefined)?.receipt_id;
          }),
      },
      this.#waits.wakeups,
      args,
    );
  }

  /** See `Inbox.notify`. */
  async notify(sessionKey: string, what: InboxNotice): Promise<void> {
    this.#open();
    assertInboxKey(sessionKey);
    assertNotice(what);
    await this.#write(`notify session ${JSON.stringify(sessionKey)}`, () =>
      this.#s.notice.run(sessionKey, what, Date.now(), PROCESS_ORIGIN),
    );
    this.#waits.notice(sessionKey, what);
  }

  /** See `Inbox.onNotify`. */
  onNotify(listener: (sessionKey: string, what: InboxNotice) => void): () => void {
    if (this.#conn === undefined) return noop;
    return this.#waits.onNotify(listener);
  }

  /** See `Inbox.deadLetters`. */
  async *deadLetters(opts?: { limit?: number }): AsyncGenerator<InboxDeadLetter, void, undefined> {
    this.#open();
    const limit = checkLimit(opts, -1);
    const letters = this.#run('list the dead letters', () =>
      (this.#s.deadLetters.all({ now: Date.now(), limit }) as (EntryRow & { outcome: string })[]).map((row) => ({
        entry: entryOf(row),
        outcome: JSON.parse(row.outcome) as OutcomeJson,
      })),
    );
    yield* letters;
  }

  /** See `InspectableInbox.pending`. */
  async pending(opts?: { sessionKey?: string; limit?: number }): Promise<readonly InboxEntry[]> {
    this.#open();
    const { sessionKey: only, limit } = checkPendingOptions(opts);
    return this.#run('list the pending entries', () => {
      const rows = only === undefined ? this.#s.pendingAll.all(limit) : this.#s.pendingOf.all(only, limit);
      return (rows as EntryRow[]).map(entryOf);
    });
  }

  /** See `InspectableInbox.leases`. */
  async leases(): Promise<readonly InboxLeaseInfo[]> {
    this.#open();
    return this.#run('list the leases', () =>
      (this.#s.leases.all(Date.now()) as { key: string; lease_worker: string; lease_expires: number }[]).map((row) => ({
        key: row.key,
        workerId: row.lease_worker,
        expiresAt: isoAt(row.lease_expires),
      })),
    );
  }

  /**
   * See `Inbox.close`: stops polling, rejects the waits, closes the file. Entries, leases and
   * outcomes stay in it. Idempotent.
   * @throws InboxError `INBOX_UNAVAILABLE` if SQLite fails to close (the inbox is closed all the same).
   */
  async close(): Promise<void> {
    const conn = this.#conn;
    if (conn === undefined) return;
    this.#batch.flush(); // the writes asked for before close() are written
    this.#conn = undefined;
    this.#waits.close(inboxClosedError(NAME));
    try {
      conn.close();
    } catch (error) {
      throw unavailable(`Cannot close ${JSON.stringify(this.path)}`, error);
    }
  }

  /** Runs `fn` (statements that read) on the connection; SQLite's failures become `INBOX_UNAVAILABLE`. */
  #run<T>(what: string, fn: () => T): T {
    try {
      this.#batch.flush(); // the writes asked for so far come first (and a loop of reads never starves them)
      return fn();
    } catch (error) {
      if (SignalyardError.isInstance(error)) throw error;
      throw unavailable(`Cannot ${what} in ${JSON.stringify(this.path)}`, error);
    }
  }

  /**
   * Runs `fn` (statements that write) in the next group commit: all of it, or nothing; resolves
   * once committed (`committed` hears its result then, at once).
   */
  #write<T>(what: string, fn: () => T, committed?: (value: T) => void): Promise<T> {
    return this.#batch.run(what, fn, this.#failure, committed);
  }

  /** What SQLite's failure in a write becomes: `INBOX_UNAVAILABLE` (the inbox's own errors pass). */
  readonly #failure = (what: string, error: unknown): unknown =>
    SignalyardError.isInstance(error) ? error : unavailable(`Cannot ${what} in ${JSON.stringify(this.path)}`, error);

  /** Drops expired dedupe ids, outcomes (with their events), dead letters and old notices, at most once per {@link SWEEP_MS}. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_MS) return;
    this.#lastSweep = now;
    const s = this.#s;
    this.#write('drop what expired', () => {
      s.sweepDedupe.run(now);
      s.sweepEvents.run(now);
      s.sweepOutcomes.run(now);
      s.sweepDead.run(now);
      s.sweepNotices.run(now - NOTICE_KEEP_MS);
    }).catch(() => undefined); // a busy file: a later write sweeps
  }
}

function noop(): void {
  // the inbox is closed: nothing to unsubscribe
}

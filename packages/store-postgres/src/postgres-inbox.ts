import { randomUUID } from 'node:crypto';
import {
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
  EventChannel,
  InboxWakeups,
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
  checkAccept,
  checkEventsArgs,
  checkLimit,
  entrySettledError,
  inboxClosedError,
  inboxFullError,
  readEventLog,
  turnEventText,
  turnEventTexts,
  type OutcomeLookup,
} from '@signalyard/core/internal';
import type { Pool } from 'pg';
import { InboxDb } from './postgres-inbox-db.js';
import { InboxListener, ownConnector, poolConnector } from './postgres-inbox-listener.js';
import { inboxNames, type InboxNames } from './postgres-inbox-names.js';
import { NoticeFilter } from './postgres-inbox-notices.js';
import {
  resolvePostgresInboxOptions,
  type PostgresInboxOptions,
  type ResolvedPostgresInboxOptions,
} from './postgres-inbox-options.js';
import { INBOX_MARK_QUERY, isInboxMark, migrateInbox } from './postgres-inbox-schema.js';
import { ackEntry, putEntryOutcome, settleEntry, type FinishDeps } from './postgres-inbox-settle.js';
import { entryOf, inboxSql, type InboxSql } from './postgres-inbox-statements.js';
import { PostgresNotifier } from './postgres-notifier.js';

const NAME = 'PostgresInbox';
/** How many entries a `read` takes at a time. */
const READ_PAGE = 100;

/**
 * The durable inbox on PostgreSQL (inbox.md), for fleets: producers and workers on many machines
 * share one database; accepted signals are settled exactly once, in `seq` order per session key,
 * whichever workers die. It passes `inboxConformance`.
 *
 * - **Tables** (created by {@link PostgresInbox.migrate}, named after `table`, default
 *   `signalyard_inbox`): the entries table, `_keys` (per session key: its last `seq`, its
 *   pending count, its lease), `_dedupe`, `_outcomes`, `_dead`, `_events`, `_counters`, the
 *   `_order` sequence and the `_accept` and `_accept_many` functions; their schema number is
 *   `POSTGRES_INBOX_SCHEMA_VERSION`. The scaling-out guide shows their layout.
 * - **`accept`** is one round trip (the `_accept` function, one transaction): `seq` comes from
 *   the session's `_keys` row (`INSERT … ON CONFLICT (key) DO UPDATE SET last_seq = last_seq + 1`),
 *   whose lock is held until commit, so accepts of one key commit in `seq` order and a later
 *   `seq` is never visible before an earlier one. A lost connection after sending it is
 *   `INBOX_OUTCOME_UNKNOWN`; a refusal by the server `INBOX_UNAVAILABLE`.
 * - **Leases** are claimed with `FOR UPDATE SKIP LOCKED` and judged by the server's
 *   `clock_timestamp()` (one clock for the fleet); `beginDelivery` counts `attempts` in a
 *   transaction that commits before it resolves, checking the lease in the same statement.
 * - **Batches**: the `accept` calls of an inbox, and a worker's `read`, `beginDelivery` and
 *   `settle` calls, made while a statement of their kind is in flight go out together in the
 *   next one (one round trip, one transaction: accepts share one commit), each ending as it
 *   would alone; a lone call runs its own statement.
 * - **Waiting** (`outcome()`, `events()`, `onNotify`): `LISTEN/NOTIFY` on one connection of the
 *   pool, notifications carrying ids only, sent after the writes they announce committed (a
 *   `NOTIFY` inside them would serialise their commits) — but for a worker's settle batches and
 *   stream appends (`publish`), which carry theirs (one statement of each kind in flight per
 *   inbox: a delta costs one commit); after that connection is lost, the waits poll every
 *   `pollMs` until it listens again and then look once more, so a lost notification delays,
 *   never loses. `LISTEN` needs a session (not a transaction-pooled PgBouncer) connection:
 *   `listenConnectionString` gives it one of its own when the pool goes through such a pooler.
 * - Outcomes are kept `ttlMs` (`putOutcome`), dedupe ids `dedupeWindowMs`; both are swept, and
 *   stream events with their outcome. Statements are named prepared statements unless
 *   `preparedStatements: false`.
 *
 * @throws ConfigError `CONFIG_INVALID` listing every bad option (the constructor never touches
 * the network).
 * @example
 * ```ts
 * import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
 *
 * const store = new PostgresCheckpointStore({ connectionString: url });
 * const inbox = new PostgresInbox({ connectionString: url });
 * await store.migrate();
 * await inbox.migrate();   // idempotent; safe from many processes at once
 * const runner = createRunner({ agents, store, inbox, worker: true });
 * ```
 */
export class PostgresInbox implements Inbox, InspectableInbox {
  /** `true`: accepted entries are committed to the database. */
  readonly durable = true;
  /** The entries table, as configured (`signalyard_inbox` by default). */
  readonly table: string;
  /** The `LISTEN`/`NOTIFY` channel of this inbox (`signalyard_inbox_` and a hash of the table name), e.g. to watch it with `psql`. */
  readonly channel: string;
  readonly #options: ResolvedPostgresInboxOptions;
  readonly #pool: Pool;
  readonly #names: InboxNames;
  readonly #sql: InboxSql;
  readonly #db: InboxDb;
  readonly #wakeups: InboxWakeups;
  /** `events()` readers, by receipt id: woken by new events too (which `outcome()` waits, in `#wakeups`, ignore). */
  readonly #streams: InboxWakeups;
  readonly #notices = new EventChannel<readonly [string, InboxNotice]>();
  readonly #entryNotices = new NoticeFilter((key) => {
    this.#notices.emit([key, 'entry']);
  });
  readonly #listener: InboxListener;
  readonly #notifier: PostgresNotifier;
  /** The lease token each entry handed out by `read` was read under. */
  readonly #readUnder = new WeakMap<InboxEntry, string>();
  #closed = false;
  #closing: Promise<void> | undefined;
  /** What the finishing writes (`ack`, `putOutcome`, `settle`) work with. */
  readonly #finishing: FinishDeps;

  /** Throws `INBOX_CLOSED` once closed (a field, so that it can be handed to the shared helpers). */
  readonly #open = (): void => {
    if (this.#closed) throw inboxClosedError(NAME);
  };

  constructor(options: PostgresInboxOptions) {
    const resolved = resolvePostgresInboxOptions(options);
    this.#options = resolved;
    this.#pool = resolved.pool;
    this.table = resolved.table.name;
    this.#names = inboxNames(resolved.table);
    this.channel = this.#names.channel;
    this.#sql = inboxSql(this.#names);
    this.#finishing = {
      sql: this.#sql,
      query: (text, values, what) => this.#db.query(text, values, what),
      settle: (values) => this.#db.settle(values),
      notify: (payload) => void this.#notifier.send(payload),
      // Outcome waits and stream readers alike: an outcome (or an ack) ends both.
      wake: (receiptId) => {
        this.#wake(receiptId);
      },
    };
    this.#db = new InboxDb(this.#pool, this.#sql, resolved.preparedStatements, this.table);
    this.#notifier = new PostgresNotifier(this.#pool, this.#names.channel);
    const { listenConnectionString: listenUrl } = resolved;
    const connector = listenUrl === undefined ? poolConnector(this.#pool) : ownConnector(listenUrl);
    this.#listener = new InboxListener(connector, this.#names.channel, resolved.pollMs, {
      notification: (payload) => {
        this.#notification(payload);
      },
      wakeAll: () => {
        this.#wakeups.wakeAll();
        this.#streams.wakeAll();
      },
      reconnected: () => {
        void this.#wakeWaitingKeys();
      },
    });
    const listen = (): void => {
      this.#listener.start();
    };
    [this.#wakeups, this.#streams] = [new InboxWakeups(listen), new InboxWakeups(listen)];
  }

  /**
   * Creates the inbox's tables, sequence and function where missing, marks the schema version
   * (the entries table's comment) and checks that an existing entries table has the inbox's
   * shape. One transaction under an advisory lock: idempotent, safe to call from many processes
   * at once (they take turns), and a failure changes nothing; once migrated, it only reads. Run
   * it before the first `accept`, at deploy or at start-up.
   * @throws PostgresStoreError `POSTGRES_MIGRATE_FAILED` (server unreachable, no permission, a
   * table of another shape under the entries table's name), `POSTGRES_SCHEMA_UNSUPPORTED`
   * (migrated by a newer release); InboxError `INBOX_CLOSED`.
   */
  async migrate(): Promise<void> {
    this.#open();
    await this.#db.tracked(() => migrateInbox(this.#pool, this.#names));
  }

  /**
   * Whether this inbox's tables are in the database: its entries table (`table`, found through
   * the connection's `search_path` when unqualified) exists and is marked as an inbox's by
   * `migrate()` (its comment `@signalyard/store-postgres inbox schema N`, any version). Reads
   * only: nothing is created (that is `migrate()`'s job). For operator tools that show an inbox
   * only where one is: `signalyard inspect --store postgres://…` shows the database's inbox
   * under the default table this way.
   * @throws InboxError `INBOX_UNAVAILABLE` (the server unreachable or refusing), `INBOX_CLOSED`.
   * @example
   * ```ts
   * const inbox = new PostgresInbox({ connectionString: url });
   * if (!(await inbox.exists())) console.log(`no inbox ${inbox.table} here: no worker has migrated one`);
   * ```
   */
  async exists(): Promise<boolean> {
    this.#open();
    const rows = await this.#db.query(INBOX_MARK_QUERY, [this.#names.entries.sql], 'look for the inbox tables');
    return isInboxMark(rows[0]?.[0]);
  }

  /** See `Inbox.accept`. */
  async accept(entry: InboxAcceptEntry): Promise<InboxReceipt> {
    this.#open();
    const input = checkAccept(entry);
    const { sessionKey } = input;
    const { maxPendingPerSession, maxPending, retryAfterMs, dedupeWindowMs } = this.#options;
    const values = [
      input.id,
      randomUUID(),
      sessionKey,
      input.agentId ?? null,
      input.kind,
      input.signalText,
      input.control ?? null,
      maxPendingPerSession,
      maxPending,
      dedupeWindowMs,
    ];
    const row = await this.#db.tracked(() => this.#db.accept(values, sessionKey));
    const [status, receiptId, key, seq, acceptedAt] = row as [string, string, string, string, string];
    if (status === 'full_session') throw inboxFullError(sessionKey, 'session', maxPendingPerSession, retryAfterMs);
    if (status === 'full_inbox') throw inboxFullError(sessionKey, 'inbox', maxPending, retryAfterMs);
    if (status === 'new') void this.#notifier.send(`E${seq}:${sessionKey}`);
    this.#sweep();
    return { receiptId, sessionKey: key, seq, acceptedAt };
  }

  /** See `Inbox.acquire`. */
  async acquire(workerId: string, opts: { leaseMs: number; max: number }): Promise<InboxLease[]> {
    this.#open();
    assertAcquire(workerId, opts);
    return this.#db.acquire(workerId, opts.leaseMs, opts.max);
  }

  /** See `Inbox.renew`. */
  async renew(lease: InboxLease): Promise<boolean> {
    this.#open();
    assertLease(lease);
    return this.#db.renew(lease);
  }

  /** See `Inbox.release`. */
  async release(lease: InboxLease): Promise<void> {
    this.#open();
    assertLease(lease);
    const what = `release the lease on ${JSON.stringify(lease.key)}`;
    const [freed] = await this.#db.query(this.#sql.release, [lease.key, lease.token], what);
    this.#entryNotices.forget(lease.key);
    if (freed !== undefined && (freed[0] as number) > 0) void this.#notifier.send(`e${lease.key}`);
  }

  /** See `Inbox.read`. */
  read(lease: InboxLease, afterSeq?: string): AsyncIterable<InboxEntry> {
    const page = (after: string): Promise<InboxEntry[] | undefined> =>
      this.#entryNotices.around(lease.key, async () => {
        const rows = await this.#db.readPage(lease.key, lease.token, after, READ_PAGE);
        if (rows[0]?.[0] !== true) return undefined;
        return rows.filter((row) => row[1] !== null).map((row) => entryOf(row.slice(1)));
      });
    return readLeased(this.#open, lease, afterSeq, page, this.#readUnder);
  }

  /** See `Inbox.beginDelivery`. */
  async beginDelivery(entry: InboxEntry): Promise<number> {
    this.#open();
    assertEntry(entry);
    return this.#db.beginDelivery(entry, this.#readUnder.get(entry));
  }

  /** See `Inbox.ack`. */
  async ack(entry: InboxEntry): Promise<void> {
    this.#open();
    await ackEntry(this.#finishing, entry);
    this.#sweep();
  }

  /** See `Inbox.putOutcome`. */
  async putOutcome(receiptId: string, outcome: OutcomeJson, ttlMs: number): Promise<void> {
    this.#open();
    await putEntryOutcome(this.#finishing, receiptId, outcome, ttlMs);
    this.#sweep();
  }

  /** See `Inbox.settle`: the last events, the outcome and the acknowledgement in one statement (one round trip). */
  async settle(entry: InboxEntry, outcome: OutcomeJson, ttlMs: number, events?: InboxSettleEvents): Promise<void> {
    this.#open();
    await settleEntry(this.#finishing, entry, outcome, ttlMs, events);
    this.#sweep();
  }

  /** See `Inbox.outcome`. */
  outcome(receiptId: string, opts?: { abortSignal?: AbortSignal; timeoutMs?: number }): Promise<OutcomeJson> {
    return inboxOutcome(this.#open, receiptId, opts, (id) => this.#lookup(id), this.#wakeups);
  }

  async #lookup(receiptId: string): Promise<OutcomeLookup> {
    this.#open();
    return this.#db.lookup(receiptId);
  }

  /** See `Inbox.publish`. */
  publish(receiptId: string, attempt: number, event: TurnEvent): Promise<void> {
    return this.#append(receiptId, attempt, () => [turnEventText(event)]);
  }

  /** See `Inbox.publishMany`: one statement (one round trip) for every event, one `NOTIFY`. */
  publishMany(receiptId: string, attempt: number, events: readonly TurnEvent[]): Promise<void> {
    return this.#append(receiptId, attempt, () => turnEventTexts(events));
  }

  async #append(receiptId: string, attempt: number, made: () => string[]): Promise<void> {
    this.#open();
    assertInboxId(receiptId, 'receipt id');
    assertAttempt(attempt);
    const texts = made();
    if (texts.length === 0) return;
    // Its notice (`v` + receipt id) is sent by the append's own commit (see `InboxDb.append`).
    if (!(await this.#db.append(receiptId, attempt, texts))) throw entrySettledError(receiptId);
    this.#streams.wake(receiptId);
  }

  /** See `Inbox.events`. */
  async *events(
    ref: InboxStreamRef,
    opts?: { from?: string; abortSignal?: AbortSignal },
  ): AsyncGenerator<InboxStreamEvent, void, undefined> {
    this.#open();
    const args = checkEventsArgs(ref, opts);
    yield* readEventLog(
      {
        page: (receiptId, after, limit) => {
          this.#open();
          return this.#db.eventPage(receiptId, after, limit);
        },
        inFlight: (sessionKey) => this.#db.inFlight(sessionKey),
      },
      this.#streams,
      args,
    );
  }

  /** See `Inbox.notify`. */
  async notify(sessionKey: string, what: InboxNotice): Promise<void> {
    this.#open();
    assertInboxKey(sessionKey);
    assertNotice(what);
    const failed = await this.#db.tracked(() => this.#notifier.send(`${what === 'stop' ? 's' : 'e'}${sessionKey}`));
    if (failed !== undefined) throw this.#db.unavailable(`Cannot notify ${JSON.stringify(sessionKey)}`, failed);
  }

  /** See `Inbox.onNotify`. */
  onNotify(listener: (sessionKey: string, what: InboxNotice) => void): () => void {
    if (this.#closed) return noop;
    const off = this.#notices.on(([key, what]) => {
      listener(key, what);
    });
    this.#listener.start();
    return off;
  }

  /** See `Inbox.deadLetters`. */
  async *deadLetters(opts?: { limit?: number }): AsyncGenerator<InboxDeadLetter, void, undefined> {
    this.#open();
    yield* await this.#db.deadLetters(checkLimit(opts, 0));
  }

  /** See `InspectableInbox.pending`. */
  async pending(opts?: { sessionKey?: string; limit?: number }): Promise<readonly InboxEntry[]> {
    this.#open();
    const { sessionKey, limit } = checkPendingOptions(opts);
    return this.#db.pending(sessionKey, limit);
  }

  /** See `InspectableInbox.leases`. */
  async leases(): Promise<readonly InboxLeaseInfo[]> {
    this.#open();
    return this.#db.leases();
  }

  /**
   * See `Inbox.close`: rejects the waits, gives the `LISTEN` connection back and — when the inbox
   * opened the pool (from `connectionString`) — ends it after the calls in flight. Entries, leases
   * and outcomes stay in the tables. Idempotent.
   * @throws InboxError `INBOX_UNAVAILABLE` if ending the pool fails (the inbox is closed all the same).
   */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#wakeups.close(inboxClosedError(NAME));
      this.#streams.close(inboxClosedError(NAME));
      this.#notices.end();
    }
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  /** Resolves once the `LISTEN` connection listens (tests use it to know notifications will be heard). */
  listening(): Promise<void> {
    return this.#listener.ready();
  }

  async #shutdown(): Promise<void> {
    await this.#listener.stop();
    await this.#db.drained();
    await this.#notifier.drained();
    if (!this.#options.ownsPool) return;
    try {
      await this.#pool.end();
    } catch (error) {
      throw this.#db.unavailable(`Cannot close the connection pool of ${NAME}`, error);
    }
  }

  /** A notification's payload: `e`/`s` + a session key (a notice), `E<seq>:<key>` (an accept's notice), `o`/`v` + a receipt id (outcome or end / new events: wakes its waits and readers / its readers). */
  #notification(payload: string): void {
    if (this.#closed) return;
    const kind = payload[0];
    const id = payload.slice(1);
    if (kind === 'E') {
      const colon = id.indexOf(':');
      this.#entryNotices.entry(id.slice(colon + 1), id.slice(0, colon));
    } else if (kind === 'e') this.#notices.emit([id, 'entry']);
    else if (kind === 's') this.#notices.emit([id, 'stop']);
    else if (kind === 'o') this.#wake(id);
    else if (kind === 'v') this.#streams.wake(id);
  }

  /** Wakes the outcome waits and the stream readers of `receiptId`. */
  #wake(receiptId: string): void {
    this.#wakeups.wake(receiptId);
    this.#streams.wake(receiptId);
  }

  /** After the `LISTEN` connection came back: an `entry` notice (and a `stop` one where a stop waits) for every session with entries. */
  async #wakeWaitingKeys(): Promise<void> {
    if (!this.#notices.hasListeners) return;
    try {
      const rows = await this.#db.query(this.#sql.waitingKeys, [], 'list the sessions with entries');
      for (const [key, stop] of rows) {
        this.#notification(`e${key as string}`);
        if (stop === true) this.#notification(`s${key as string}`);
      }
    } catch {
      // the next reconnect or the worker's own polling finds them
    }
  }

  /** Drops what expired, now and then (see `InboxDb.sweep`). */
  #sweep(): void {
    if (!this.#closed) this.#db.sweep();
  }
}

function noop(): void {
  // the inbox is closed: nothing to unsubscribe
}

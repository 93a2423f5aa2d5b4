import {
  InboxError,
  SignalyardError,
  type InboxDeadLetter,
  type InboxEntry,
  type InboxLease,
  type InboxLeaseInfo,
  type OutcomeJson,
} from '@signalyard/core';
import {
  entrySettledError,
  errorText,
  leaseLostError,
  type EventPage,
  type OutcomeLookup,
} from '@signalyard/core/internal';
import type { Pool, PoolClient } from 'pg';
import { InFlightCalls } from './postgres-in-flight.js';
import { finishManyKey } from './postgres-inbox-batch-statements.js';
import { Batcher } from './postgres-batcher.js';
import { entryOf, type InboxSql } from './postgres-inbox-statements.js';
import { PreparedStatements } from './postgres-prepared.js';
import { pgCodeOf } from './postgres-schema.js';

/** How often (ms) a write also drops what expired, at most (per inbox instance). */
const SWEEP_MS = 10_000;
/** A SQLSTATE: the server answered (and rolled the statement back), as opposed to a lost connection. */
const SQLSTATE = /^[0-9A-Z]{5}$/;
/** Statements in flight per batched kind (pages read; settles and deliveries counted): the calls made meanwhile wait and go out together. */
const BATCHES_IN_FLIGHT = 1;

/** One page to read: a lease's key and token, the `seq` to read after, how many entries at most. */
interface ReadCall {
  readonly key: string;
  readonly token: string;
  readonly after: string;
  readonly limit: number;
}

/** One delivery to count: the entry, and the lease token it was read under (`null`: not checked). */
interface DeliveryCall {
  readonly receiptId: string;
  readonly token: string | null;
}

/** One append to a receipt's stream log: the receipt, the delivery's attempt, the events' texts. */
interface AppendCall {
  readonly receiptId: string;
  readonly attempt: number;
  readonly texts: readonly string[];
}

/** One accept: the `_accept` function's arguments, and the session key (for its errors). */
interface AcceptCall {
  readonly values: unknown[];
  readonly sessionKey: string;
}

/** `Inbox.settle`'s values, checked and serialised: receipt id, outcome text, ttlMs, poisoned, attempt, event texts. @internal */
export type SettleValues = readonly [string, string, number, boolean, number, readonly string[]];
/** A call the finishing batches serve: a settle, or a delivery to count. */
type FinishCall = { readonly settle: SettleValues } | { readonly begin: DeliveryCall };
/** A settle's result, or a delivery's count (`undefined`: not counted). */
type FinishOutput = SettleResult | number | undefined;

/** What a settle did: outcome stored, entry removed, events added, and whether its notices were sent with it. @internal */
export type SettleResult = readonly [boolean, boolean, number, boolean];

/**
 * The database side of a `PostgresInbox`: its pool, its (prepared) statements, the calls in
 * flight (so `close()` ends the pool only after them), the mapping of failures to `InboxError`s,
 * and the reads that only turn rows into values (stream pages, operators' lists).
 * @internal
 */
export class InboxDb {
  readonly sql: InboxSql;
  readonly #pool: Pool;
  readonly #table: string;
  readonly #prepared: PreparedStatements;
  readonly #inFlight = new InFlightCalls();
  #lastSweep = Number.NEGATIVE_INFINITY;
  /** Pages being read (`read`), several leases' in one statement when they come faster than one round trip. */
  readonly #reads: Batcher<ReadCall, unknown[][]>;
  /** Settles and delivery counts (`settle`, `beginDelivery`), several in one statement when they come faster than one round trip. */
  readonly #finishes: Batcher<FinishCall, FinishOutput>;
  /** Appends to stream logs (`publish`), several receipts' in one statement when they come faster than one round trip. */
  readonly #appends: Batcher<AppendCall, boolean>;
  /** Accepts (`accept`), several in one statement when they come faster than one round trip. */
  readonly #accepts: Batcher<AcceptCall, unknown[] | InboxError>;

  constructor(pool: Pool, sql: InboxSql, preparedStatements: boolean, table: string) {
    this.#pool = pool;
    this.sql = sql;
    this.#table = table;
    this.#prepared = new PreparedStatements(sql, preparedStatements);
    this.#reads = new Batcher<ReadCall, unknown[][]>(
      {
        one: ({ key, token, after, limit }) =>
          this.query(this.sql.read, [key, token, after, limit], `read the entries of ${JSON.stringify(key)}`),
        many: async (calls) => {
          const what = `read the entries of ${String(calls.length)} sessions`;
          const values = [
            calls.map((c) => c.key),
            calls.map((c) => c.token),
            calls.map((c) => c.after),
            calls.map((c) => c.limit),
          ];
          const pages = calls.map((): unknown[][] => []);
          for (const row of await this.query(this.sql.readMany, values, what))
            pages[(row[0] as number) - 1]?.push(row.slice(1));
          return pages;
        },
      },
      BATCHES_IN_FLIGHT,
    );
    this.#finishes = new Batcher<FinishCall, FinishOutput>(
      {
        one: (call) => ('settle' in call ? this.#settleOne(call.settle) : this.#countOne(call.begin)),
        many: (calls) => this.#finishMany(calls),
        idOf: (call) => ('settle' in call ? call.settle[0] : call.begin.receiptId),
      },
      BATCHES_IN_FLIGHT,
    );
    this.#appends = new Batcher<AppendCall, boolean>(
      {
        one: (call) => this.#appendOne(call),
        many: (calls) => this.#appendMany(calls),
        idOf: (call) => call.receiptId,
      },
      BATCHES_IN_FLIGHT,
    );
    this.#accepts = new Batcher<AcceptCall, unknown[] | InboxError>(
      {
        one: (call) => this.#acceptOne(call),
        many: (calls) => this.#acceptMany(calls),
        // a retry racing its first attempt waits for the next statement (it then finds its receipt)
        idOf: (call) => call.values[0] as string,
      },
      BATCHES_IN_FLIGHT,
    );
  }

  /** One settle alone (its notices are sent after it, by the caller). */
  async #settleOne(values: SettleValues): Promise<SettleResult> {
    const [row] = await this.query(this.sql.settle, [...values], `settle ${JSON.stringify(values[0])}`);
    const [stored, gone, added] = (row ?? [false, false, 0]) as [boolean, boolean, number];
    return [stored, gone, added, false];
  }

  /** One delivery count alone: the attempts, or `undefined` when not counted. */
  async #countOne({ receiptId, token }: DeliveryCall): Promise<number | undefined> {
    const rows = await this.query(
      this.sql.beginDelivery,
      [receiptId, token],
      `count a delivery of ${JSON.stringify(receiptId)}`,
    );
    return rows[0]?.[0] as number | undefined;
  }

  /** Settles and delivery counts in one statement (`finishMany`): each call's output, in order. */
  async #finishMany(calls: readonly FinishCall[]): Promise<FinishOutput[]> {
    const settles: { at: number; values: SettleValues }[] = [];
    const counts: { at: number; call: DeliveryCall }[] = [];
    calls.forEach((call, at) => {
      if ('settle' in call) settles.push({ at, values: call.settle });
      else counts.push({ at, call: call.begin });
    });
    const eventEntry: number[] = [];
    const eventTexts: string[] = [];
    settles.forEach(({ values }, i) => {
      for (const text of values[5]) {
        eventEntry.push(i + 1);
        eventTexts.push(text);
      }
    });
    const column = <T>(pick: (v: SettleValues) => T): T[] => settles.map(({ values }) => pick(values));
    // The statement of this batch's shape: the parts it does not need are not in it.
    const shape = {
      settles: settles.length > 0,
      events: eventTexts.length > 0,
      poisoned: settles.some(({ values }) => values[3]),
      counts: counts.length > 0,
    };
    const values = [
      ...(shape.settles
        ? [column((v) => v[0]), column((v) => v[1]), column((v) => v[2]), column((v) => v[3]), column((v) => v[4])]
        : []),
      ...(shape.events ? [eventEntry, eventTexts] : []),
      ...(shape.counts ? [counts.map((c) => c.call.receiptId), counts.map((c) => c.call.token)] : []),
    ];
    const what = `settle ${String(settles.length)} entries and count ${String(counts.length)} deliveries`;
    const outputs: FinishOutput[] = calls.map((call) => ('settle' in call ? [false, false, 0, true] : undefined));
    const text = this.sql[finishManyKey(shape)];
    for (const [kind, i, stored, gone, n] of await this.query(text, values, what)) {
      if (kind === 's')
        outputs[(settles[(i as number) - 1] as { at: number }).at] = [stored, gone, n, true] as SettleResult;
      else outputs[(counts[(i as number) - 1] as { at: number }).at] = n as number;
    }
    return outputs;
  }

  /**
   * A page of the entries of `key` after `after` (at most `limit`), read under the lease `token`:
   * rows `[live, …entry columns]` (one with nulls when none) — with the reads of other leases made
   * meanwhile when one is in flight already.
   */
  readPage(key: string, token: string, after: string, limit: number): Promise<unknown[][]> {
    return this.#reads.run({ key, token, after, limit });
  }

  /**
   * `Inbox.settle`'s one statement (events, outcome, acknowledgement) — with the settles of other
   * entries made meanwhile when one is in flight already.
   */
  settle(values: SettleValues): Promise<SettleResult> {
    return this.#finishes.run({ settle: values }) as Promise<SettleResult>;
  }

  /** Runs one call, counted so that the pool is ended only after it. */
  tracked<T>(fn: () => Promise<T>): Promise<T> {
    return this.#inFlight.track(fn);
  }

  /** Resolves once no call is in flight. */
  drained(): Promise<void> {
    return this.#inFlight.drained();
  }

  /** Runs one statement on a pooled connection; failures become `INBOX_UNAVAILABLE`. */
  query(text: string, values: unknown[], what: string): Promise<unknown[][]> {
    return this.tracked(async () => {
      try {
        return await this.#prepared.run(this.#pool, text, values);
      } catch (error) {
        if (SignalyardError.isInstance(error)) throw error;
        throw this.unavailable(`Cannot ${what}`, error);
      }
    });
  }

  /** `INBOX_UNAVAILABLE` for `what` failing with `error` (with a hint to migrate when the tables are missing). */
  unavailable(what: string, error: unknown): InboxError {
    const code = pgCodeOf(error);
    const hint = code === '42P01' || code === '42883' ? ` (run migrate() to create the inbox ${this.#table})` : '';
    return new InboxError({
      code: 'INBOX_UNAVAILABLE',
      message: `${what}: ${errorText(error)}${code === undefined ? '' : ` (${code})`}${hint}`,
      cause: error,
    });
  }

  /**
   * Runs the `_accept` function (`values`: its arguments) — or, when an accept is in flight
   * already, `_accept_many` for the accepts made meanwhile, in one transaction (one commit, one
   * round trip) — on a connection of its own, telling a refusal by the server
   * (`INBOX_UNAVAILABLE`: nothing written) from a lost acknowledgement (`INBOX_OUTCOME_UNKNOWN`).
   */
  async accept(values: unknown[], sessionKey: string): Promise<unknown[]> {
    const done = await this.#accepts.run({ values, sessionKey });
    if (done instanceof Error) throw done;
    return done;
  }

  /** One accept alone: its row, or the error it ends with. */
  async #acceptOne({ values, sessionKey }: AcceptCall): Promise<unknown[] | InboxError> {
    const what = `Cannot accept an entry for session ${JSON.stringify(sessionKey)}`;
    const rows = await this.#onOwnConnection(this.sql.accept, values, what, [sessionKey]);
    return Array.isArray(rows) ? (rows[0] as unknown[]) : (rows.errors[0] as InboxError);
  }

  /**
   * Several accepts in one statement: each one's row, or the error it ends with. A refusal by the
   * server wrote nothing: the accepts are then made one by one, in order (one bad entry fails alone).
   */
  async #acceptMany(calls: readonly AcceptCall[]): Promise<(unknown[] | InboxError)[]> {
    const column = (i: number): unknown[] => calls.map((c) => c.values[i]);
    const values = [...[0, 1, 2, 3, 4, 5, 6].map(column), ...(calls[0] as AcceptCall).values.slice(7)];
    const what = `Cannot accept ${String(calls.length)} entries`;
    const rows = await this.#onOwnConnection(
      this.sql.acceptMany,
      values,
      what,
      calls.map((c) => c.sessionKey),
    );
    if (Array.isArray(rows)) {
      const out: (unknown[] | InboxError)[] = calls.map(() => this.unavailable(what, new Error('no row returned')));
      for (const row of rows) out[(row[0] as number) - 1] = row.slice(1);
      return out;
    }
    if (rows.refused === undefined) return rows.errors;
    const out: (unknown[] | InboxError)[] = [];
    for (const call of calls) out.push(await this.#acceptOne(call));
    return out;
  }

  /**
   * Runs `text` on a connection taken for it alone: its rows; or, when it failed, one error per
   * session key in `keys` (`INBOX_OUTCOME_UNKNOWN` when the connection was lost after sending it)
   * and — when the server refused it (nothing written) — that refusal.
   */
  async #onOwnConnection(
    text: string,
    values: unknown[],
    what: string,
    keys: readonly string[],
  ): Promise<unknown[][] | { errors: InboxError[]; refused?: InboxError }> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      const unavailable = this.unavailable(what, error);
      return { errors: keys.map(() => unavailable) };
    }
    let broken = false;
    try {
      return await this.#prepared.run(client, text, values);
    } catch (error) {
      const code = pgCodeOf(error);
      if (code !== undefined && SQLSTATE.test(code)) {
        const refused = this.unavailable(what, error);
        return { errors: keys.map(() => refused), refused };
      }
      broken = true;
      const message = `${what}: the connection was lost after the entry was sent (${errorText(error)}): it may or may not have been written; retry with the same id`;
      return {
        errors: keys.map(
          (sessionKey) => new InboxError({ code: 'INBOX_OUTCOME_UNKNOWN', message, sessionKey, cause: error }),
        ),
      };
    } finally {
      client.release(broken);
    }
  }

  /** Claims up to `max` leases for `workerId` (`FOR UPDATE SKIP LOCKED`, judged by the server's clock). */
  async acquire(workerId: string, leaseMs: number, max: number): Promise<InboxLease[]> {
    const what = `acquire leases for ${JSON.stringify(workerId)}`;
    const rows = await this.query(this.sql.acquire, [workerId, leaseMs, max], what);
    return rows.map(([key, token, expiresAt]) => ({
      key: key as string,
      workerId,
      token: token as string,
      expiresAt: expiresAt as string,
    }));
  }

  /** Renews `lease`: `false` when it expired or was taken over. */
  async renew(lease: InboxLease): Promise<boolean> {
    const what = `renew the lease on ${JSON.stringify(lease.key)}`;
    return (await this.query(this.sql.renew, [lease.key, lease.token], what)).length === 1;
  }

  /**
   * Counts a delivery of `entry` (read under the lease token `token`; `undefined`: not checked) —
   * with the deliveries of other entries made meanwhile when a count is in flight already.
   * @throws InboxError `INBOX_ENTRY_SETTLED` when the entry is gone, `LEASE_LOST` when the lease is.
   */
  async beginDelivery(entry: InboxEntry, token: string | undefined): Promise<number> {
    const what = `count a delivery of ${JSON.stringify(entry.receiptId)}`;
    const attempts = (await this.#finishes.run({ begin: { receiptId: entry.receiptId, token: token ?? null } })) as
      number | undefined;
    if (attempts !== undefined) return attempts;
    if ((await this.query(this.sql.entryExists, [entry.receiptId], what)).length === 0)
      throw entrySettledError(entry.receiptId);
    throw leaseLostError(entry.sessionKey, 'it expired or was taken over before the delivery began');
  }

  /** The receipt's outcome, `'pending'` while its entry waits, `'gone'` when neither is kept. */
  async lookup(receiptId: string): Promise<OutcomeLookup> {
    const [row] = await this.query(this.sql.lookup, [receiptId], `read the outcome of ${JSON.stringify(receiptId)}`);
    const [outcome, inInbox] = row as [string | null, boolean];
    if (outcome !== null) return { outcome: JSON.parse(outcome) as OutcomeJson };
    return inInbox ? 'pending' : 'gone';
  }

  /**
   * Appends `texts` (stream events) to the receipt's log under `attempt`, with its notice (`v` +
   * receipt id) sent by the same commit: `false` when its entry is settled. One append statement
   * is in flight at a time; the appends made meanwhile (other receipts') go out together in the
   * next. A `NOTIFY` inside a transaction serialises the commits that notify (a lock held through
   * the commit's flush), so this keeps it to one such commit in flight per inbox for appends — as
   * for settle batches — while a delta reaches a reader one round trip and one commit sooner than
   * with the notifier's `pg_notify` after the commit (a second transaction, a second flush).
   */
  append(receiptId: string, attempt: number, texts: readonly string[]): Promise<boolean> {
    return this.#appends.run({ receiptId, attempt, texts });
  }

  /** One receipt's append alone (`publish`/`publishMany`, notifying). */
  async #appendOne({ receiptId, attempt, texts }: AppendCall): Promise<boolean> {
    const rows = await this.query(
      texts.length === 1 ? this.sql.publish : this.sql.publishMany,
      [receiptId, attempt, texts.length === 1 ? texts[0] : texts],
      `publish events of ${JSON.stringify(receiptId)}`,
    );
    return (rows[0]?.[0] as number | undefined) === 1;
  }

  /** Several receipts' appends in one statement (`publishBatch`): whether each was appended, in order. */
  async #appendMany(calls: readonly AppendCall[]): Promise<boolean[]> {
    const entry: number[] = [];
    const texts: string[] = [];
    calls.forEach((call, i) => {
      for (const text of call.texts) {
        entry.push(i + 1);
        texts.push(text);
      }
    });
    const values = [calls.map((c) => c.receiptId), calls.map((c) => c.attempt), entry, texts];
    const rows = await this.query(this.sql.publishBatch, values, `publish events of ${String(calls.length)} receipts`);
    const appended = calls.map(() => false);
    for (const [i] of rows) appended[(i as number) - 1] = true;
    return appended;
  }

  /** Drops what expired, at most once per {@link SWEEP_MS}, without making the caller wait. */
  sweep(): void {
    const now = Date.now();
    if (now - this.#lastSweep < SWEEP_MS) return;
    this.#lastSweep = now;
    this.query(this.sql.sweep, [], 'drop what expired').catch(() => undefined);
  }

  /** A page of a receipt's stream log after the offset `after`. */
  async eventPage(receiptId: string, after: string | undefined, limit: number): Promise<EventPage> {
    const rows = await this.query(
      this.sql.events,
      [receiptId, after ?? '0', limit],
      `read the events of ${JSON.stringify(receiptId)}`,
    );
    return {
      live: rows[0]?.[0] === true,
      rows: rows
        .filter((row) => row[1] !== null)
        .map(([, offset, attempt, text]) => ({
          offset: offset as string,
          attempt: attempt as number,
          text: text as string,
        })),
    };
  }

  /** The receipt id of the session's latest in-flight receipt with events, if any. */
  async inFlight(sessionKey: string): Promise<string | undefined> {
    const rows = await this.query(this.sql.inFlight, [sessionKey], `find the stream of ${JSON.stringify(sessionKey)}`);
    return rows[0]?.[0] as string | undefined;
  }

  /** The dead letters kept, oldest first (`limit` 0: all). */
  async deadLetters(limit: number): Promise<InboxDeadLetter[]> {
    const rows = await this.query(this.sql.deadLetters, [limit === 0 ? null : limit], 'list the dead letters');
    return rows.map((row) => ({ entry: entryOf(row), outcome: JSON.parse(row[8] as string) as OutcomeJson }));
  }

  /** The pending entries, of every session or of `sessionKey`. */
  async pending(sessionKey: string | undefined, limit: number): Promise<InboxEntry[]> {
    const rows =
      sessionKey === undefined
        ? await this.query(this.sql.pendingAll, [limit], 'list the pending entries')
        : await this.query(this.sql.pendingOf, [sessionKey, limit], 'list the pending entries');
    return rows.map(entryOf);
  }

  /** The live leases. */
  async leases(): Promise<InboxLeaseInfo[]> {
    const rows = await this.query(this.sql.leases, [], 'list the leases');
    return rows.map(([key, workerId, expiresAt]) => ({
      key: key as string,
      workerId: workerId as string,
      expiresAt: expiresAt as string,
    }));
  }
}

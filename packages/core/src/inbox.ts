import type { JsonValue } from './approval.js';
import type { OutcomeJson } from './outcome-json.js';
import type { SignalKind } from './signal.js';
import type { TurnEvent } from './turn-event.js';

/**
 * A signal as JSON, as an inbox keeps it: its kind and its payload. The payload meets the
 * checkpoint JSON rules (no `NaN`, `Infinity`, `BigInt`, functions, symbols or cycles);
 * what is kept is `JSON.parse(JSON.stringify(payload))`.
 */
export interface SignalJson {
  /** The signal's kind. */
  readonly kind: SignalKind;
  /** The signal's payload, as JSON. */
  readonly payload: JsonValue;
}

/**
 * What `accept` resolves with: proof that the entry is durable, and how to find it again.
 * The same receipt is returned for every retry with the same `id` within `dedupeWindowMs`.
 */
export interface InboxReceipt {
  /** Globally unique id of the entry (a UUID v4, or the transport's own id). */
  readonly receiptId: string;
  /** The session the entry belongs to. */
  readonly sessionKey: string;
  /**
   * The entry's place in its session, as a decimal string (exact beyond 2^53): strictly
   * increasing per session key, in commit order. Compare numerically — a longer string is the
   * larger number, equal lengths compare as text — never as plain strings (`"9"` < `"10"`).
   */
  readonly seq: string;
  /** When the entry was accepted, as ISO-8601 (the transport's clock). */
  readonly acceptedAt: string;
}

/** Options of `Runner.accept`. */
export interface AcceptOptions {
  /** The agent to apply the signal to (default: the session's, or the runner's default agent). */
  readonly agentId?: string;
  /**
   * A producer-chosen id (an HTTP request id, a message id from the source). A retry with an id
   * already accepted within `dedupeWindowMs` returns the first receipt and appends nothing.
   * Without it, `accept` generates one and reuses it for its own retries.
   */
  readonly id?: string;
}

/** What `Inbox.accept` takes: one signal for one session, with the producer's dedupe id. */
export interface InboxAcceptEntry {
  /** The session the signal is for: a non-empty string of well-formed Unicode without NUL, at most 1,024 code units. */
  readonly sessionKey: string;
  /** The agent to apply it to, when the producer said. */
  readonly agentId?: string;
  /** The signal, as JSON. */
  readonly signal: SignalJson;
  /** The dedupe id: an entry with an id already accepted within `dedupeWindowMs` is not appended again. */
  readonly id: string;
  /** A control entry (`rewind`, `delete`, `approve`), applied by the lease holder in `seq` order. */
  readonly control?: InboxEntry['control'];
}

/** One accepted signal, as a worker reads it from the inbox. */
export interface InboxEntry extends InboxReceipt {
  /** The agent to apply it to, when the producer said. */
  readonly agentId?: string;
  /** The signal, as JSON. */
  readonly signal: SignalJson;
  /** How many deliveries of this entry have begun (`beginDelivery`), durably: 0 before the first. */
  readonly attempts: number;
  /** A control entry: `rewind` and `delete` (the session's) and `approve` (a decision), applied in `seq` order. */
  readonly control?: 'rewind' | 'delete' | 'approve';
}

/**
 * A worker's right to settle one session key's entries, until `expiresAt` unless renewed. Opaque
 * apart from its fields: pass it back to the inbox that gave it.
 */
export interface InboxLease {
  /** The session key it covers. */
  readonly key: string;
  /** The worker that holds it. */
  readonly workerId: string;
  /** Unique to this acquisition: a later lease on the same key (after expiry) has another. */
  readonly token: string;
  /** When it expires unless renewed, as ISO-8601 on the transport's clock (as it was when acquired or last known). */
  readonly expiresAt: string;
}

/** One event of a receipt's stream, as `Inbox.events` yields it. */
export interface InboxStreamEvent {
  /** Opaque position in the receipt's log: pass it as `from` to continue after it. Compared only by the inbox. */
  readonly offset: string;
  /** The delivery that published it (1 for the first). */
  readonly attempt: number;
  /** The turn event. An `outcome` event's outcome is rebuilt from its `OutcomeJson` (its error passes `isSignalyardError`). */
  readonly event: TurnEvent;
}

/** The last events of a delivery that `Inbox.settle` appends to the receipt's log before storing its outcome. */
export interface InboxSettleEvents {
  /** The delivery's count (from `beginDelivery`). */
  readonly attempt: number;
  /** The events, in order (normally ending with the `outcome` event). */
  readonly events: readonly TurnEvent[];
}

/** Which stream `Inbox.events` reads: one receipt's, or the latest in-flight receipt of a session. */
export type InboxStreamRef =
  | {
      /** The receipt whose stream to read. */
      readonly receiptId: string;
    }
  | {
      /** The session whose latest in-flight receipt's stream to read. */
      readonly sessionKey: string;
    };

/** What an inbox notification says about a session: new entries arrived, or a stop was accepted. */
export type InboxNotice = 'entry' | 'stop';

/** An entry settled as poisoned, with its stored outcome (`INBOX_POISONED`). */
export interface InboxDeadLetter {
  /** The entry as it was when it was settled. */
  readonly entry: InboxEntry;
  /** Its stored outcome: `failed`, with error code `INBOX_POISONED`. */
  readonly outcome: OutcomeJson;
}

/**
 * Where accepted signals wait until a worker settles them: the durable inbox of inbox.md. Once
 * `accept` resolves, the entry is settled exactly once, in `seq` order for its session key, by
 * whichever worker holds the key's lease — across process deaths, restarts and stalls.
 *
 * Implementations: `MemoryInbox` (core, for tests and one process), `SqliteInbox`
 * (`@signalyard/store-sqlite`), `PostgresInbox` (`@signalyard/store-postgres`), `JetStreamInbox`
 * (`@signalyard/nats`). A third-party transport proves itself with `inboxConformance` from
 * `@signalyard/core/testing`.
 *
 * Rules every method follows:
 * - **Errors** are `InboxError`s: `INBOX_INPUT_INVALID` for a bad argument (nothing written),
 *   `INBOX_UNAVAILABLE` when the transport failed (for `accept`: nothing written),
 *   `INBOX_CLOSED` after `close()`; the others are named per method.
 * - **Time** (lease expiry, outcome and dedupe retention) is judged by the transport's clock
 *   (PostgreSQL `clock_timestamp()`, SQLite and memory the host's), so workers on many machines
 *   agree on it.
 * - **The worker's sequence** for an entry is: `read` → `beginDelivery` → (engine, `publish`) →
 *   settling checkpoint save → `putOutcome` → `ack`. An entry is settled by the checkpoint save
 *   (its `inboxSeq`); `ack` only tidies the inbox, so an entry redelivered after a lost `ack`
 *   is recognised by its `seq` and acknowledged without being applied again.
 */
export interface Inbox {
  /**
   * True for a transport that keeps entries across process deaths (and `MemoryInbox`, which has
   * the same semantics in one process). A Runner with a non-durable inbox keeps its in-process
   * queue.
   */
  readonly durable: boolean;

  /**
   * Appends one entry for `entry.sessionKey` and resolves once it is durable (committed, or the
   * stream's acknowledgement), with its receipt. `seq` is allocated per session key in the
   * accepting transaction, so concurrent accepts for one key commit in `seq` order and a later
   * `seq` is never visible before an earlier one; keys are independent. Every listener of
   * `onNotify` (in any process over the same storage) hears `(sessionKey, 'entry')` afterwards.
   *
   * An `id` already accepted within `dedupeWindowMs` returns that first receipt and appends
   * nothing (also after the entry was settled).
   * @throws InboxError `INBOX_FULL` (with `retryAfterMs`) when the session has
   * `maxPendingPerSession` entries not yet acknowledged, or the inbox `maxPending`; nothing is
   * written. `INBOX_UNAVAILABLE` when nothing was written; `INBOX_OUTCOME_UNKNOWN` when the
   * acknowledgement was lost (retry with the same `id`); `INBOX_INPUT_INVALID` for an empty or
   * malformed session key, a signal that is not `{ kind, payload }` with a JSON payload, an empty
   * `id`, an unknown `control`; `INBOX_CLOSED`.
   */
  accept(entry: InboxAcceptEntry): Promise<InboxReceipt>;

  /**
   * Takes up to `max` leases, for `leaseMs` each, on session keys that have entries not yet
   * acknowledged and no live lease (one held by another worker, or by this one). Keys waiting
   * longest come first. Never gives one key to two workers while a lease on it is live; an
   * expired lease is taken over (with a new `token`). Resolves `[]` when there is nothing to take.
   * @throws InboxError `INBOX_INPUT_INVALID` (an empty `workerId`, `leaseMs` or `max` not an
   * integer ≥ 1), `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  acquire(workerId: string, opts: { leaseMs: number; max: number }): Promise<InboxLease[]>;

  /**
   * Extends the lease by the `leaseMs` it was acquired with, counted from now. Resolves `false`
   * when the lease is lost: it expired (even if nobody took the key since), was released, or the
   * key was taken over; a worker that gets `false` aborts its turn (`LEASE_LOST`) and saves
   * nothing after it.
   * @throws InboxError `INBOX_INPUT_INVALID`, `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  renew(lease: InboxLease): Promise<boolean>;

  /**
   * Gives the lease up: its key can be acquired at once, by any worker. Deliveries begun under it
   * and not acknowledged do not count (their `attempts` go back down): a release is a clean hand
   * over (`close()`), not a death. A lease that is already lost is ignored.
   * @throws InboxError `INBOX_INPUT_INVALID`, `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  release(lease: InboxLease): Promise<void>;

  /**
   * The lease's key's entries not yet acknowledged, in `seq` order, skipping those with `seq` ≤
   * `afterSeq` (a decimal string). Read in pages as iteration goes, so entries accepted meanwhile
   * are included; it ends when no entry is left after the last one yielded.
   * @throws InboxError `LEASE_LOST` (from the iteration) when the lease is no longer held when
   * a page is read; `INBOX_INPUT_INVALID` (a bad lease or `afterSeq`), `INBOX_UNAVAILABLE`,
   * `INBOX_CLOSED`.
   */
  read(lease: InboxLease, afterSeq?: string): AsyncIterable<InboxEntry>;

  /**
   * Counts one delivery of `entry`, durably, before the engine runs, and resolves with the new
   * count (1 for the first delivery). A worker compares it with `maxDeliveries`: above it, the
   * entry is poisoned (settled `failed` with `INBOX_POISONED`, without running the engine).
   * @throws InboxError `LEASE_LOST` when the entry is no longer in the inbox (another worker
   * settled it) or the lease it was read under is no longer held; `INBOX_INPUT_INVALID`,
   * `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  beginDelivery(entry: InboxEntry): Promise<number>;

  /**
   * Removes a settled entry from the inbox (after the settling checkpoint save and
   * `putOutcome`): `read` no longer yields it and it no longer counts towards `maxPending`.
   * Idempotent. Acknowledge after `putOutcome`: an entry acknowledged without an outcome makes
   * `outcome()` reject with `OUTCOME_EXPIRED`, and drops its events.
   * @throws InboxError `INBOX_INPUT_INVALID`, `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  ack(entry: InboxEntry): Promise<void>;

  /**
   * Stores the outcome of a settled entry for `ttlMs` (the Runner passes `outcomeTtlMs`) and
   * wakes every `outcome(receiptId)` waiting, in any process. The first outcome put for a receipt
   * stays until it expires: a later put is ignored (a late worker cannot replace the settling
   * worker's outcome). An outcome whose error code is `INBOX_POISONED` also keeps the entry as
   * a dead letter for as long (put it before `ack`).
   * @throws InboxError `INBOX_INPUT_INVALID` (an empty receipt id, an outcome that is not JSON,
   * `ttlMs` not an integer ≥ 1), `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  putOutcome(receiptId: string, outcome: OutcomeJson, ttlMs: number): Promise<void>;

  /**
   * The outcome of a receipt, from any process: at once when stored, else once it is put.
   * `abortSignal` and `timeoutMs` end only this wait; the entry is still settled.
   * @throws InboxError `OUTCOME_EXPIRED` when neither an outcome nor the entry is there (the
   * outcome's TTL passed, or the receipt was never accepted here); `OUTCOME_TIMEOUT` when
   * `timeoutMs` passes first; `INBOX_INPUT_INVALID`, `INBOX_UNAVAILABLE`, `INBOX_CLOSED`;
   * AbortedError `ABORTED` when `abortSignal` fires.
   */
  outcome(receiptId: string, opts?: { abortSignal?: AbortSignal; timeoutMs?: number }): Promise<OutcomeJson>;

  /**
   * Appends one event to the receipt's stream log (the settling worker publishes each turn event;
   * `attempt` is the delivery's count from `beginDelivery`). A delivery after the first publishes
   * `{ type: 'restarted', attempt }` first, so readers drop the events of older attempts; in a log
   * that was empty it voids nothing, and readers skip it (see {@link Inbox.events}). An `outcome` event's outcome is stored as `OutcomeJson`; other events as
   * JSON (errors as `{ name, message }`, `bigint` as a string, functions dropped). Publish
   * before `ack`: the log is pruned with the outcome.
   * @throws InboxError `LEASE_LOST` when the entry is no longer in the inbox (it was settled and
   * acknowledged); `INBOX_INPUT_INVALID` (an empty receipt id, `attempt` not an integer ≥ 1, an
   * event that is not a turn event), `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  publish(receiptId: string, attempt: number, event: TurnEvent): Promise<void>;

  /**
   * Optional: {@link Inbox.publish} for several events of one delivery at once — appended in
   * order, in one write where the transport allows (one transaction or statement, one round
   * trip: all or none), and readers woken once. A worker uses it when a turn's events come faster than one
   * write at a time; without it, it publishes them one by one. An empty list appends nothing.
   * @throws as {@link Inbox.publish}; `INBOX_INPUT_INVALID` also for `events` that is not an array.
   */
  publishMany?(receiptId: string, attempt: number, events: readonly TurnEvent[]): Promise<void>;

  /**
   * Optional: finishes a settled entry in one write where the transport allows (one transaction
   * or statement, one round trip): appends the delivery's last `events` (when given and not
   * empty, as {@link Inbox.publishMany}; normally ending with the `outcome` event), stores
   * `outcome` for `ttlMs` (as {@link Inbox.putOutcome}: the first outcome stored stays, a poisoned
   * one keeps a dead letter), then acknowledges the entry (as {@link Inbox.ack}) — all or none.
   * Waiters of the outcome and readers of the log are woken. A worker calls it after the
   * settling save instead of `publishMany` + `putOutcome` + `ack` when the transport has it.
   * An entry no longer in the inbox (settled and acknowledged elsewhere) gets its outcome
   * stored as `putOutcome` would and nothing else: its events are not appended.
   * @throws as {@link Inbox.putOutcome} and {@link Inbox.publishMany} (never `LEASE_LOST`).
   */
  settle?(entry: InboxEntry, outcome: OutcomeJson, ttlMs: number, events?: InboxSettleEvents): Promise<void>;

  /**
   * Reads a stream log, waiting for events as they are published.
   * - `{ receiptId }`: the receipt's events after `from` (all of them without it), each exactly
   *   once; it ends after the `outcome` event, or when the receipt is no longer in the inbox and
   *   no event is left (it was settled, or never accepted).
   * - `{ sessionKey }`: the session's latest in-flight receipt (the one with the highest `seq`
   *   among those not yet acknowledged that have published events), from the first event of its
   *   latest attempt (without that attempt's own `restarted` marker); it ends at once when
   *   nothing is in flight. `from` does not apply.
   *
   * Either way, events of an attempt below the latest `restarted` seen are dropped (a
   * partitioned old worker may still be publishing), and the `restarted` events themselves are
   * yielded, so a reader knows to start its reply again — except one read before this reader
   * yielded anything (from the start of the log, or of the session's latest attempt): it voids
   * nothing the reader showed and is skipped.
   * @throws InboxError `INBOX_INPUT_INVALID` (a bad reference or offset, `from` with a
   * session key), `INBOX_UNAVAILABLE`, `INBOX_CLOSED`; AbortedError `ABORTED` when `abortSignal`
   * fires — all from the iteration.
   */
  events(ref: InboxStreamRef, opts?: { from?: string; abortSignal?: AbortSignal }): AsyncIterable<InboxStreamEvent>;

  /**
   * Tells every `onNotify` listener, in every process over the same storage, about a session:
   * `stop` (a stop was accepted: the lease holder acts on it at once) or `entry` (wake up and
   * read). Best effort and fast: a notice may arrive late, out of order with other notices, or —
   * while a listener's connection is down — be replaced by a wake-up for every session with
   * entries; the entries themselves are never lost.
   * @throws InboxError `INBOX_INPUT_INVALID`, `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  notify(sessionKey: string, what: InboxNotice): Promise<void>;

  /**
   * Subscribes to notices (`accept` sends `entry` for its key; `notify` sends either); returns
   * the unsubscribe function. A listener hears the notices sent once the inbox listens — at once
   * in memory, a moment later for a transport that opens a connection or starts polling for it.
   * Listeners run synchronously, in subscription order; one that throws is ignored. No listener
   * is called after `close()`.
   */
  onNotify(listener: (sessionKey: string, what: InboxNotice) => void): () => void;

  /**
   * The entries settled as poisoned (their stored outcome's error code is `INBOX_POISONED`),
   * oldest first, while their outcome is kept; at most `limit` (an integer ≥ 1) when given.
   * @throws InboxError `INBOX_INPUT_INVALID`, `INBOX_UNAVAILABLE`, `INBOX_CLOSED` — from the
   * iteration.
   */
  deadLetters(opts?: { limit?: number }): AsyncIterable<InboxDeadLetter>;

  /**
   * Closes the inbox: pending `outcome()` waits and `events()` reads reject with `INBOX_CLOSED`,
   * listeners are dropped, and connections the inbox opened are closed. Entries, leases and
   * outcomes stay in the storage (a Runner releases its leases before closing). Idempotent; later
   * calls reject with `INBOX_CLOSED`.
   */
  close(): Promise<void>;
}

/** A lease as an operator sees it: who holds which session, until when (no token). */
export interface InboxLeaseInfo {
  /** The session key it covers. */
  readonly key: string;
  /** The worker that holds it. */
  readonly workerId: string;
  /** When it expires unless renewed, as ISO-8601 on the transport's clock. */
  readonly expiresAt: string;
}

/**
 * What an inbox shows operators (the inspector, `signalyard inbox list`), beside the `Inbox`
 * interface: the entries waiting and the leases held. Implemented by `MemoryInbox`,
 * `SqliteInbox` and `PostgresInbox`.
 */
export interface InspectableInbox {
  /**
   * Entries not yet acknowledged, ordered by session key then `seq`; only `sessionKey`'s when
   * given; at most `limit` (an integer ≥ 1, default 1,000).
   * @throws InboxError `INBOX_INPUT_INVALID`, `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  pending(opts?: { sessionKey?: string; limit?: number }): Promise<readonly InboxEntry[]>;
  /**
   * The live leases (expired ones are left out), ordered by session key.
   * @throws InboxError `INBOX_UNAVAILABLE`, `INBOX_CLOSED`.
   */
  leases(): Promise<readonly InboxLeaseInfo[]>;
}

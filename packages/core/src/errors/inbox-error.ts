import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.InboxError');

/** The codes of {@link InboxError}, shared by every `Inbox` transport (memory, SQLite, PostgreSQL, JetStream, third-party ones). */
export type InboxErrorCode =
  /** `accept` refused the entry because too many wait: the session has `maxPendingPerSession` entries not yet settled, or the inbox `maxPending`. Nothing was written; `retryAfterMs` says when to try again (an HTTP server answers 429 with `Retry-After`). Fix: retry after `retryAfterMs` with the same `id` (a retry is never a duplicate); add workers, or raise the limits if the backlog is expected. */
  | 'INBOX_FULL'
  /** The transport could not be reached or refused the call (the database is down, the connection failed, a lock timed out); for `accept`, nothing was written. Fix: retry later — an `accept` retried with the same `id` within `dedupeWindowMs` is never a duplicate; check the server and the connection settings. */
  | 'INBOX_UNAVAILABLE'
  /** `accept` lost the transport's acknowledgement (the connection dropped after the entry was sent): the entry may or may not exist. Fix: retry `accept` with the same `id` within `dedupeWindowMs`: it returns the first receipt when the entry was written, and writes it once when it was not. */
  | 'INBOX_OUTCOME_UNKNOWN'
  /** The entry was delivered more than `maxDeliveries` times without being settled (its workers died or stalled each time), so it was settled `failed` without running the engine; it is listed by `deadLetters()`. Fix: look at the entry (`deadLetters()`, the inspector) for what kills its workers (a payload that crashes the process, a turn longer than `leaseMs`), fix that, and accept it again if it still matters. */
  | 'INBOX_POISONED'
  /** The worker no longer holds the session's lease: it expired (not renewed within `leaseMs`) and another worker may have taken the session over, or the entry was settled by another worker. The turn in flight is aborted and nothing it would save is kept. Fix: nothing for the entry (another worker settles it); if it happens often, raise `leaseMs` or find what stalls the worker's event loop. */
  | 'LEASE_LOST'
  /** `outcome(receiptId)` found no outcome and no entry for the receipt: its outcome was kept `outcomeTtlMs` and is gone, or no entry with that receipt was ever accepted by this inbox. Fix: ask for outcomes within `outcomeTtlMs` of settlement (raise it if callers come back later), and check the receipt id. */
  | 'OUTCOME_EXPIRED'
  /** `outcome(receiptId, { timeoutMs })` waited `timeoutMs` without the entry being settled. The entry is still in the inbox and will be settled. Fix: wait again (`outcome` can be called any number of times, from any process), or raise `timeoutMs`. */
  | 'OUTCOME_TIMEOUT'
  /** An inbox is configured in a way that cannot hold its guarantees: a `SessionLock` together with a durable inbox (leases replace the lock), a durable inbox over a `MemoryCheckpointStore` other than `MemoryInbox`, or a transport whose stored layout differs from its options. Fix: drop the `lock` option, use a shared durable checkpoint store, or make the options match what the transport's storage was created with. */
  | 'INBOX_CONFIG_INVALID'
  /** An inbox method was given an argument it cannot take: an empty or malformed session key, a signal that is not `{ kind, payload }` with a payload meeting the checkpoint JSON rules, an empty `id`, a lease or entry that is not one, a negative TTL, unknown options. The message names the value; nothing was written. Fix: pass the values the message asks for (the Runner validates for you: use `runner.accept`). */
  | 'INBOX_INPUT_INVALID'
  /** The inbox was used after `close()` (waits still pending at that moment reject with it too). Fix: close an inbox only when nothing uses it any more; create a new one to go on. */
  | 'INBOX_CLOSED';

/**
 * An `Inbox` refused or failed a call (codes in {@link InboxErrorCode}): the inbox is full
 * (`INBOX_FULL`, with {@link InboxError.retryAfterMs}), the transport is unreachable
 * (`INBOX_UNAVAILABLE`) or lost its acknowledgement (`INBOX_OUTCOME_UNKNOWN`), a lease was lost,
 * an outcome expired or was not there in time, an entry was poisoned, or an argument was bad.
 * Every transport throws these codes for these cases, so a Runner (or any caller) handles them
 * the same way over memory, SQLite, PostgreSQL or JetStream.
 *
 * @example
 * ```ts
 * try {
 *   await runner.accept(sessionKey, signal, { id: requestId });
 * } catch (error) {
 *   if (InboxError.isInstance(error) && error.code === 'INBOX_FULL') {
 *     response.writeHead(429, { 'Retry-After': String(Math.ceil((error.retryAfterMs ?? 1000) / 1000)) });
 *   }
 * }
 * ```
 */
export class InboxError extends SignalyardError<InboxErrorCode> {
  private readonly [marker] = true;
  /** `INBOX_FULL`: how long to wait before retrying, in milliseconds. */
  declare readonly retryAfterMs?: number;
  /** The session key the call was about, when it was about one. */
  declare readonly sessionKey?: string;
  /** The receipt the call was about, when it was about one. */
  declare readonly receiptId?: string;

  constructor(options: {
    code: InboxErrorCode;
    message: string;
    retryAfterMs?: number;
    sessionKey?: string;
    receiptId?: string;
    cause?: unknown;
  }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.sessionKey !== undefined) this.sessionKey = options.sessionKey;
    if (options.receiptId !== undefined) this.receiptId = options.receiptId;
  }

  /** True when `error` is an `InboxError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is InboxError {
    return hasErrorMarker(error, marker);
  }
}

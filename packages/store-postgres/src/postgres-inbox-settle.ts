import type { InboxEntry, InboxSettleEvents, OutcomeJson } from '@signalyard/core';
import {
  assertEntry,
  assertInboxId,
  assertTtl,
  checkSettle,
  isPoisonedOutcome,
  outcomeText,
} from '@signalyard/core/internal';
import type { SettleResult, SettleValues } from './postgres-inbox-db.js';
import type { InboxSql } from './postgres-inbox-statements.js';

/** What the worker's finishing writes of a `PostgresInbox` work with. @internal */
export interface FinishDeps {
  readonly sql: InboxSql;
  /** Runs one statement on a pooled connection (failures: `INBOX_UNAVAILABLE`). */
  readonly query: (text: string, values: unknown[], what: string) => Promise<unknown[][]>;
  /** Runs the settle statement (with other settles made meanwhile, in one statement, when one is in flight). */
  readonly settle: (values: SettleValues) => Promise<SettleResult>;
  /** Sends a notification (after the write committed): `o`/`v` + a receipt id. */
  readonly notify: (payload: string) => void;
  /** Wakes this process's waits on a receipt. */
  readonly wake: (receiptId: string) => void;
}

/**
 * `Inbox.ack` on PostgreSQL: removes the entry (and its events when it has no outcome kept) in one
 * statement; its waiters elsewhere are notified when it had no outcome (they learn it is gone).
 * @internal
 */
export async function ackEntry(d: FinishDeps, entry: InboxEntry): Promise<void> {
  assertEntry(entry);
  const [gone] = await d.query(d.sql.ack, [entry.receiptId], `acknowledge ${JSON.stringify(entry.receiptId)}`);
  // without an outcome, its waiters elsewhere learn it is gone (OUTCOME_EXPIRED); with one, they were woken by it
  if (gone?.[0] === true) d.notify(`o${entry.receiptId}`);
  d.wake(entry.receiptId);
}

/** `Inbox.putOutcome` on PostgreSQL: one statement (with the dead letter of a poisoned outcome). @internal */
export async function putEntryOutcome(
  d: FinishDeps,
  receiptId: string,
  outcome: OutcomeJson,
  ttlMs: number,
): Promise<void> {
  assertInboxId(receiptId, 'receipt id');
  assertTtl(ttlMs);
  const text = outcomeText(receiptId, outcome);
  const values = [receiptId, text, ttlMs, isPoisonedOutcome(outcome)];
  const stored = await d.query(d.sql.putOutcome, values, `store the outcome of ${JSON.stringify(receiptId)}`);
  if (stored.length > 0) d.notify(`o${receiptId}`);
  d.wake(receiptId);
}

/**
 * `Inbox.settle` on PostgreSQL: the delivery's last events, the outcome (and a poisoned one's
 * dead letter) and the acknowledgement in one statement — one round trip and one commit instead
 * of three (and the settles of other entries made while one is in flight in the same statement).
 * Its commit waits for the WAL flush (unlike `ack` alone): the outcome is in it.
 * @internal
 */
export async function settleEntry(
  d: FinishDeps,
  entry: InboxEntry,
  outcome: OutcomeJson,
  ttlMs: number,
  events: InboxSettleEvents | undefined,
): Promise<void> {
  const c = checkSettle(entry, outcome, ttlMs, events);
  const [stored, gone, added, notified] = await d.settle([
    c.receiptId,
    c.outcomeText,
    ttlMs,
    c.poisoned,
    c.attempt,
    c.eventTexts,
  ]);
  if (!notified) {
    if (added > 0) d.notify(`v${c.receiptId}`);
    if (stored || gone) d.notify(`o${c.receiptId}`);
  }
  d.wake(c.receiptId);
}

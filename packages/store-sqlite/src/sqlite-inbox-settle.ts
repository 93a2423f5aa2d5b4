import type { OutcomeJson } from '@signalyard/core';
import { isPoisonedOutcome, type CheckedSettle } from '@signalyard/core/internal';
import type { InboxStatements } from './sqlite-inbox-statements.js';

/** What one settle wrote. @internal */
export interface SettleWritten {
  /** The outcome was stored (none live was there). */
  readonly stored: boolean;
  /** The entry was in the inbox and is removed. */
  readonly removed: boolean;
}

/**
 * The statements of `SqliteInbox.settle`, run inside one write (one transaction of the group
 * commit): the delivery's last events while the entry is in the inbox, the outcome (a poisoned
 * one's dead letter read from the entry before it goes), then the acknowledgement. The events
 * stay: the outcome is kept (this one, or a live one stored before).
 * @internal
 */
export function settleStatements(s: InboxStatements, c: CheckedSettle, now: number, ttlMs: number): SettleWritten {
  const { receiptId, eventTexts } = c;
  for (const text of eventTexts) {
    if (s.publish.run(receiptId, c.attempt, text, receiptId).changes !== 1) break; // not in the inbox: none
  }
  const expires = now + ttlMs;
  s.dropExpiredOutcome.run(receiptId, now);
  const stored = s.insertOutcome.run(receiptId, c.outcomeText, expires).changes === 1;
  if (stored && c.poisoned) {
    s.dropDead.run(receiptId);
    s.keepDead.run(expires, receiptId);
  }
  const row = s.deleteEntry.get(receiptId) as { session_key: string } | undefined;
  if (row === undefined) return { stored, removed: false };
  s.settleKey.run(row.session_key);
  s.addPending.run(-1);
  return { stored, removed: true };
}

/**
 * The statements of `SqliteInbox.ack`: the entry removed, its key's and the inbox's pending
 * counts lowered, and its events dropped unless a live outcome keeps them. `true`: it was there.
 * @internal
 */
export function ackStatements(s: InboxStatements, receiptId: string, now: number): boolean {
  const row = s.deleteEntry.get(receiptId) as { session_key: string } | undefined;
  if (row === undefined) return false;
  s.settleKey.run(row.session_key);
  s.addPending.run(-1);
  if (s.liveOutcome.get(receiptId, now) === undefined) s.dropEvents.run(receiptId);
  return true;
}

/**
 * The statements of `SqliteInbox.putOutcome`: the outcome stored until `expires` unless a live one
 * is there (an expired one is dropped first); a poisoned outcome also keeps the entry's dead
 * letter until then. `true`: this outcome was stored.
 * @internal
 */
export function putOutcomeStatements(
  s: InboxStatements,
  receiptId: string,
  outcome: OutcomeJson,
  text: string,
  now: number,
  expires: number,
): boolean {
  s.dropExpiredOutcome.run(receiptId, now);
  if (s.insertOutcome.run(receiptId, text, expires).changes !== 1) return false;
  if (isPoisonedOutcome(outcome)) {
    s.dropDead.run(receiptId);
    s.keepDead.run(expires, receiptId);
  }
  return true;
}

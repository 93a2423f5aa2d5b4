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
 * commit): the acknowledgement (the entry removed: the schema's trigger lowers its key's and the
 * inbox's pending counts), the delivery's last events when it was in the inbox, and the outcome. The events
 * stay: the outcome is kept (this one, or a live one stored before). A poisoned outcome's dead
 * letter is read from the entry before it goes.
 * @internal
 */
export function settleStatements(s: InboxStatements, c: CheckedSettle, now: number, ttlMs: number): SettleWritten {
  const { receiptId } = c;
  const expires = now + ttlMs;
  if (c.poisoned) return settlePoisoned(s, c, now, expires);
  const row = s.deleteEntry.get(receiptId) as [sessionKey: string] | undefined;
  if (row !== undefined) insertEvents(s, receiptId, c.attempt, c.eventTexts);
  const stored = storeOutcome(s, receiptId, c.outcomeText, now, expires);
  return { stored, removed: row !== undefined };
}

/** {@link settleStatements} for a poisoned outcome: its events and outcome, the dead letter from the entry, then the acknowledgement. */
function settlePoisoned(s: InboxStatements, c: CheckedSettle, now: number, expires: number): SettleWritten {
  const { receiptId } = c;
  if (s.entryExists.get(receiptId) !== undefined) insertEvents(s, receiptId, c.attempt, c.eventTexts);
  const stored = storeOutcome(s, receiptId, c.outcomeText, now, expires);
  if (stored) {
    s.dropDead.run(receiptId);
    s.keepDead.run(expires, receiptId);
  }
  return { stored, removed: ackStatements(s, receiptId, now) };
}

/** Appends a delivery's events (the entry is in the inbox), two rows per statement. */
function insertEvents(s: InboxStatements, receiptId: string, attempt: number, texts: readonly string[]): void {
  let i = 0;
  for (; i + 1 < texts.length; i += 2) s.insertEvents2.run(receiptId, attempt, texts[i], texts[i + 1]);
  if (i < texts.length) s.insertEvent.run(receiptId, attempt, texts[i]);
}

/** Stores the outcome until `expires` unless a live one is there (an expired one is replaced). `true`: stored. */
function storeOutcome(s: InboxStatements, receiptId: string, text: string, now: number, expires: number): boolean {
  if (s.insertOutcome.run(receiptId, text, expires).changes === 1) return true;
  if (s.dropExpiredOutcome.run(receiptId, now).changes !== 1) return false;
  return s.insertOutcome.run(receiptId, text, expires).changes === 1;
}

/**
 * The statements of `SqliteInbox.ack`: the entry removed (the schema's trigger lowers the pending
 * counts), and its events dropped unless a live outcome keeps them. `true`: it was there.
 * @internal
 */
export function ackStatements(s: InboxStatements, receiptId: string, now: number): boolean {
  const row = s.deleteEntry.get(receiptId) as [sessionKey: string] | undefined;
  if (row === undefined) return false;
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
  if (!storeOutcome(s, receiptId, text, now, expires)) return false;
  if (isPoisonedOutcome(outcome)) {
    s.dropDead.run(receiptId);
    s.keepDead.run(expires, receiptId);
  }
  return true;
}

import type { InboxSettleEvents } from '../inbox.js';
import {
  assertAttempt,
  assertEntry,
  assertTtl,
  inboxInputError,
  isPoisonedOutcome,
  outcomeText,
} from './inbox-input.js';
import { turnEventTexts } from './inbox-streams.js';
import { isRecord } from './values.js';

/** `Inbox.settle`'s arguments, checked and serialised. */
export interface CheckedSettle {
  readonly receiptId: string;
  /** The outcome as stored (`outcomeText`). */
  readonly outcomeText: string;
  /** Whether the outcome keeps a dead letter (`INBOX_POISONED`). */
  readonly poisoned: boolean;
  /** The delivery's count of the events (1 when there are none). */
  readonly attempt: number;
  /** The events to append, as stored (`turnEventText` each); empty for none. */
  readonly eventTexts: readonly string[];
}

/**
 * Checks `Inbox.settle`'s arguments before anything is written (so a bad one writes nothing).
 * @throws InboxError `INBOX_INPUT_INVALID` naming the bad value.
 * @internal
 */
export function checkSettle(entry: unknown, outcome: unknown, ttlMs: unknown, events: unknown): CheckedSettle {
  assertEntry(entry);
  assertTtl(ttlMs);
  const receiptId = entry.receiptId;
  const text = outcomeText(receiptId, outcome);
  let attempt = 1;
  let eventTexts: readonly string[] = [];
  if (events !== undefined) {
    if (!isRecord(events)) throw inboxInputError('settle events', events, '{ attempt, events } or undefined');
    const given = events as Partial<InboxSettleEvents>;
    assertAttempt(given.attempt);
    attempt = given.attempt;
    eventTexts = turnEventTexts(given.events);
  }
  return { receiptId, outcomeText: text, poisoned: isPoisonedOutcome(outcome), attempt, eventTexts };
}

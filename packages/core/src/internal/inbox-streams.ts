import { InboxError } from '../errors/inbox-error.js';
import type { InboxStreamEvent } from '../inbox.js';
import { DEFAULT_MAX_OUTCOME_BYTES, outcomeFromJson, type OutcomeJson } from '../outcome-json.js';
import type { TurnEvent } from '../turn-event.js';
import { throwIfAborted, linkAbortSignals } from './abort.js';
import { untilAborted } from './abort-race.js';
import { compareInboxSeq } from './inbox-seq.js';
import { inboxInputError, outcomeExpiredError, outcomeTimeoutError } from './inbox-input.js';
import type { InboxWakeups } from './inbox-wakeups.js';
import { toJsonValue } from './json-safe.js';
import { outcomeJsonOnce } from './outcome-json-once.js';
import { deadline } from './timers.js';
import { isRecord } from './values.js';

/**
 * A turn event as the JSON text an inbox's stream log keeps: an `outcome` event's outcome as
 * `OutcomeJson` (`outcomeToJson`), any other event as JSON (errors as `{ name, message }`,
 * `bigint`s as strings, functions dropped).
 * @throws InboxError `INBOX_INPUT_INVALID` for something that is not a turn event.
 */
export function turnEventText(event: TurnEvent): string {
  if (!isRecord(event) || typeof event.type !== 'string' || (event.type as string) === '') {
    throw inboxInputError('turn event', event, 'a TurnEvent { type, … }');
  }
  if (event.type === 'outcome') {
    return JSON.stringify({ type: 'outcome', outcome: outcomeJsonOnce(event.outcome, DEFAULT_MAX_OUTCOME_BYTES) });
  }
  if (event.type === 'restarted') {
    const { attempt } = event as { attempt?: unknown };
    if (typeof attempt !== 'number' || !Number.isSafeInteger(attempt) || attempt < 1) {
      throw inboxInputError('restarted event attempt', attempt, 'an integer >= 1');
    }
    return JSON.stringify({ type: 'restarted', attempt });
  }
  return JSON.stringify(toJsonValue(event));
}

/**
 * `publishMany`'s events as {@link turnEventText} makes each.
 * @throws InboxError `INBOX_INPUT_INVALID` for something that is not an array of turn events.
 */
export function turnEventTexts(events: unknown): string[] {
  if (!Array.isArray(events)) throw inboxInputError('turn events', events, 'an array of TurnEvents');
  return events.map((event) => turnEventText(event as TurnEvent));
}

/** A stream log's JSON text back as a turn event (an `outcome` event's outcome rebuilt with `outcomeFromJson`). */
export function turnEventFromText(text: string): TurnEvent {
  const event = JSON.parse(text) as TurnEvent;
  if (event.type === 'outcome') {
    return { type: 'outcome', outcome: outcomeFromJson(event.outcome as unknown as OutcomeJson) };
  }
  return event;
}

/** What an inbox knows about a receipt's outcome right now. */
export type OutcomeLookup = { readonly outcome: OutcomeJson } | 'pending' | 'gone';

/**
 * `Inbox.outcome` on any transport: looks the receipt up, and while its entry waits, looks again
 * each time `wakeups` wakes it, until the outcome is there, the entry is gone without one
 * (`OUTCOME_EXPIRED`, after a second lookup: see the loop), `timeoutMs` passes (`OUTCOME_TIMEOUT`) or `abortSignal` fires (`ABORTED`).
 * Only the wait ends: nothing is changed in the inbox.
 */
export async function waitForOutcome(
  receiptId: string,
  opts: { readonly abortSignal?: AbortSignal; readonly timeoutMs?: number },
  lookup: (receiptId: string) => Promise<OutcomeLookup> | OutcomeLookup,
  wakeups: InboxWakeups,
): Promise<OutcomeJson> {
  const { abortSignal, timeoutMs } = opts;
  throwIfAborted(abortSignal);
  const limit =
    timeoutMs === undefined || timeoutMs === Infinity
      ? undefined
      : deadline(timeoutMs, () => outcomeTimeoutError(receiptId, timeoutMs));
  const signal = linkAbortSignals(abortSignal, limit?.signal);
  try {
    for (;;) {
      const watch = wakeups.watch(receiptId);
      try {
        let found = await untilAborted(lookup(receiptId), signal);
        // A lookup reads the outcome, then whether the entry waits: a settle between the two reads
        // (its outcome stored, then its entry removed) looks like "gone". Every transport stores
        // the outcome before it removes the entry, so a second lookup tells the two apart.
        if (found === 'gone') found = await untilAborted(lookup(receiptId), signal);
        if (found === 'gone') throw outcomeExpiredError(receiptId);
        if (found !== 'pending') return found.outcome;
        await untilAborted(watch.promise, signal);
      } finally {
        watch.dispose();
      }
    }
  } catch (error) {
    if (limit?.signal.aborted === true && abortSignal?.aborted !== true && !InboxError.isInstance(error)) {
      throw outcomeTimeoutError(receiptId, timeoutMs as number);
    }
    throw error;
  } finally {
    limit?.clear();
  }
}

/** One row of a receipt's stream log, as a transport stores it. */
export interface EventRow {
  /** Its offset: a decimal string, increasing in the receipt's log in commit order. */
  readonly offset: string;
  /** The delivery that published it. */
  readonly attempt: number;
  /** The event, as {@link turnEventText} made it. */
  readonly text: string;
}

/** One page of a receipt's stream log. */
export interface EventPage {
  /** The rows after the position asked for, in offset order. */
  readonly rows: readonly EventRow[];
  /**
   * Whether the receipt's entry was still in the inbox, as seen **before** the rows were read
   * (or in the same snapshot): when it was not, no row can follow the ones returned.
   */
  readonly live: boolean;
}

/** What {@link readEventLog} needs from a transport. */
export interface EventLogSource {
  /** The rows of the receipt's log after `after` (all of them without it), in offset order, at most `limit`. */
  page(receiptId: string, after: string | undefined, limit: number): Promise<EventPage> | EventPage;
  /** The session's latest in-flight receipt: the highest `seq` among its entries in the inbox that have a non-empty log. */
  inFlight(sessionKey: string): Promise<string | undefined> | string | undefined;
}

/** How every `restarted` event's text starts ({@link turnEventText} writes it in this shape). */
const RESTARTED = '{"type":"restarted"';

/** How many rows {@link readEventLog} reads at a time. */
const PAGE = 200;

/**
 * `Inbox.events` on any transport whose offsets are decimal strings: reads the log page by page,
 * waits on `wakeups` for more, drops events of attempts below the latest `restarted` seen, and
 * ends after the `outcome` event or once the receipt is out of the inbox with nothing left to
 * read. For `{ sessionKey }` it starts at the first event of the in-flight receipt's latest
 * attempt. A `restarted` read before this reader yielded anything (from the start of a log, or of
 * a session's latest attempt) voids nothing it showed and is skipped — so a worker may publish
 * one to an empty log.
 */
export async function* readEventLog(
  source: EventLogSource,
  wakeups: InboxWakeups,
  ref: {
    readonly receiptId?: string;
    readonly sessionKey?: string;
    readonly from?: string;
    readonly abortSignal?: AbortSignal;
  },
): AsyncGenerator<InboxStreamEvent, void, undefined> {
  const signal = ref.abortSignal;
  throwIfAborted(signal);
  let receiptId = ref.receiptId;
  let position = ref.from;
  let latest = 0;
  // A `restarted` voids what this reader showed: before anything was shown (a reader from the
  // start of the log, or of a session's latest attempt) it voids nothing and is skipped.
  let shown = receiptId !== undefined && position !== undefined;
  if (receiptId === undefined) {
    receiptId = await untilAborted(source.inFlight(ref.sessionKey as string), signal);
    if (receiptId === undefined) return;
    const start = await untilAborted(latestAttemptStart(source, receiptId), signal);
    position = start.before;
    latest = start.attempt;
  } else if (position !== undefined) {
    latest = await untilAborted(restartedThrough(source, receiptId, position), signal);
  }
  for (;;) {
    const watch = wakeups.watch(receiptId);
    try {
      const { rows, live } = await untilAborted(source.page(receiptId, position, PAGE), signal);
      for (const row of rows) {
        position = row.offset;
        const event = turnEventFromText(row.text);
        if (event.type === 'restarted') latest = Math.max(latest, row.attempt, event.attempt);
        if (row.attempt < latest) continue;
        if (event.type === 'restarted' && !shown) continue;
        shown = true;
        yield { offset: row.offset, attempt: row.attempt, event };
        if (event.type === 'outcome') return;
      }
      if (rows.length === PAGE) continue;
      if (!live) return; // out of the inbox before these rows were read: nothing can follow them
      await untilAborted(watch.promise, signal);
    } finally {
      watch.dispose();
    }
  }
}

/** Where a session reader starts: before the first row of the log's latest attempt. */
async function latestAttemptStart(
  source: EventLogSource,
  receiptId: string,
): Promise<{ before: string | undefined; attempt: number }> {
  let attempt = 0;
  let before: string | undefined;
  let previous: string | undefined;
  let after: string | undefined;
  for (;;) {
    const { rows } = await source.page(receiptId, after, PAGE);
    for (const row of rows) {
      if (row.attempt > attempt) {
        attempt = row.attempt;
        before = previous;
      }
      previous = row.offset;
    }
    if (rows.length < PAGE) return { before, attempt };
    after = previous;
  }
}

/** The latest `restarted` attempt among the log's rows up to and including `through`. */
async function restartedThrough(source: EventLogSource, receiptId: string, through: string): Promise<number> {
  let latest = 0;
  let after: string | undefined;
  for (;;) {
    const { rows } = await source.page(receiptId, after, PAGE);
    for (const row of rows) {
      if (compareInboxSeq(row.offset, through) > 0) return latest;
      if (row.text.startsWith(RESTARTED)) latest = Math.max(latest, row.attempt);
      after = row.offset;
    }
    if (rows.length < PAGE) return latest;
  }
}

import type { Clock, Outcome, SessionCause, Signal } from '@signalyard/core';
import { isoAt, readClock } from '@signalyard/core/internal';
import { decisionRecords } from './approvals.js';
import { userTextOf } from './history.js';

/** How much of a user message's text a version's cause keeps. */
const CAUSE_TEXT_UNITS = 200;

/**
 * Why a signal's version exists: the signal (for a user message, the first 200 code units of its
 * text, one fewer where the 200th would split a surrogate pair; other payloads are not copied),
 * how it ended, and the route that decided it; `merged`: the user messages a merged turn answered
 * (2 or more); `at` read off the runner's `clock`. @internal
 */
export function signalCause(
  clock: Clock,
  signal: Signal,
  outcome: Pick<Outcome, 'decidedBy'> & { status?: Outcome['status'] },
  merged?: number,
): SessionCause {
  const text = causeText(signal);
  const decided = outcome.decidedBy;
  // Assigned in a fixed order (no conditional spreads): one object, one shape, on every signal.
  const cause: { -readonly [K in keyof SessionCause]: SessionCause[K] } = {
    at: isoAt(readClock(clock)),
    signal: text === undefined ? { kind: signal.kind } : { kind: signal.kind, text },
  };
  if (outcome.status !== undefined) cause.status = outcome.status;
  if (decided !== undefined) cause.tier = decided.tier;
  if (decided?.route.name !== undefined) cause.routeName = decided.route.name;
  if (merged !== undefined && merged > 1) cause.merged = merged;
  if (signal.kind === 'tool_approval') cause.approvals = decisionRecords(signal);
  return cause;
}

function causeText(signal: Signal): string | undefined {
  const text = userTextOf(signal); // the same text the history keeps
  return text === undefined ? undefined : truncateUnits(text, CAUSE_TEXT_UNITS);
}

/** The first `max` UTF-16 code units of `text`, one fewer where the last would split a surrogate pair. */
function truncateUnits(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

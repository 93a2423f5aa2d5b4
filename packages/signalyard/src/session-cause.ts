import type { Outcome, SessionCause, Signal } from '@signalyard/core';
import { decisionRecords } from './approvals.js';
import { userMessageOf } from './history.js';

/** How much of a user message's text a version's cause keeps. */
const CAUSE_TEXT_UNITS = 200;

/**
 * Why a signal's version exists: the signal (for a user message, the first 200 code units of its
 * text, one fewer where the 200th would split a surrogate pair; other payloads are not copied),
 * how it ended, and the route that decided it; `merged`: the user messages a merged turn answered
 * (2 or more). @internal
 */
export function signalCause(
  signal: Signal,
  outcome: Pick<Outcome, 'decidedBy'> & { status?: Outcome['status'] },
  merged?: number,
): SessionCause {
  const text = causeText(signal);
  const decided = outcome.decidedBy;
  const approvals = signal.kind === 'tool_approval' ? decisionRecords(signal) : undefined;
  return {
    at: isoNow(),
    signal: text === undefined ? { kind: signal.kind } : { kind: signal.kind, text },
    ...(outcome.status !== undefined && { status: outcome.status }),
    ...(decided !== undefined && { tier: decided.tier }),
    ...(decided?.route.name !== undefined && { routeName: decided.route.name }),
    ...(merged !== undefined && merged > 1 && { merged }),
    ...(approvals !== undefined && { approvals }),
  };
}

function causeText(signal: Signal): string | undefined {
  const user = userMessageOf(signal); // the same text the history keeps
  return user === undefined ? undefined : truncateUnits(user.content, CAUSE_TEXT_UNITS);
}

/** The first `max` UTF-16 code units of `text`, one fewer where the last would split a surrogate pair. */
function truncateUnits(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

let lastMs = Number.NaN;
let lastIso = '';
/** The current time as ISO-8601, formatted once per millisecond (a version per signal asks often). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

import type { Action, Clock, Outcome, RunSummary, SessionCause, Signal } from '@signalyard/core';
import { frozenJsonValue, isJsonRecord, isoAt, readClock } from '@signalyard/core/internal';
import { decisionRecords } from './approvals.js';
import { causePayload, type Redact } from './cause-payload.js';
import { userTextOf } from './history.js';
import { CauseRecord, SummaryRecord } from './plain-records.js';

/** How much of a user message's text a version's cause keeps. */
const CAUSE_TEXT_UNITS = 200;

/** What a version's cause is made with: the runner's clock, payload cap and `redact`. @internal */
export interface CauseOptions {
  readonly clock: Clock;
  /** `maxCausePayloadBytes`: the longest payload JSON (UTF-8 bytes) a cause keeps. */
  readonly maxPayloadBytes: number;
  readonly redact: Redact | undefined;
}

/** The empty list a summary starts with: shared, and marked so that stores share it instead of copying it. */
const NONE: readonly never[] = frozenJsonValue([]);

/** Each route's `{ tier, name }`, made once per route (and marked: stores share it). */
const ROUTES = new WeakMap<object, RunSummary['route']>();

function routeOf(decided: NonNullable<Outcome['decidedBy']>): RunSummary['route'] {
  let route = ROUTES.get(decided.route);
  if (route?.tier !== decided.tier) {
    route = frozenJsonValue({ tier: decided.tier, name: decided.route.name ?? '' });
    ROUTES.set(decided.route, route);
  }
  return route;
}

/**
 * Why a signal's version exists: the signal (for a user message, the first 200 code units of its
 * text, one fewer where the 200th would split a surrogate pair; its payload as JSON, capped and
 * redacted), how it ended, and the route that decided it; `merged`: the user messages a merged
 * turn answered (2 or more); `at` read off the runner's `clock` (now, unless the caller read it). With a `status` (a final save)
 * it carries the start of its `summary` (status, route, action); the save adds what the turn did.
 * @internal
 */
export function signalCause(
  options: CauseOptions,
  signal: Signal,
  outcome: Pick<Outcome, 'decidedBy'> & { status?: Outcome['status']; action?: Action | undefined },
  merged?: number,
  at: number = readClock(options.clock),
): SessionCause {
  const text = causeText(signal);
  const decided = outcome.decidedBy;
  // Filled in from `{}` (room for four fields in the object itself): kind, text, payload and the
  // mark sealedCause adds fit without an extra property store.
  const recorded: {
    -readonly [K in keyof NonNullable<SessionCause['signal']>]?: NonNullable<SessionCause['signal']>[K];
  } = {};
  recorded.kind = signal.kind;
  if (text !== undefined) recorded.text = text;
  const payload = signal.payload;
  // The hot path: a short text payload, nothing to redact, is kept as it is (no copy, no object).
  if (typeof payload === 'string' && options.redact === undefined && payload.length * 3 + 2 <= options.maxPayloadBytes)
    recorded.payload = payload;
  else {
    const kept = causePayload(payload, options.maxPayloadBytes, options.redact);
    if (kept.payload !== undefined) recorded.payload = kept.payload;
    else if (kept.omitted !== undefined) recorded.payloadOmitted = kept.omitted;
  }
  // Assigned in a fixed order (no conditional spreads): one object, one shape, on every signal.
  // A plain record sized for the fields filled in below and the mark (plain-records.ts).
  const cause = new CauseRecord(isoAt(at), recorded as NonNullable<SessionCause['signal']>);
  if (outcome.status !== undefined) cause.status = outcome.status;
  if (decided !== undefined) cause.tier = decided.tier;
  if (decided?.route.name !== undefined) cause.routeName = decided.route.name;
  if (merged !== undefined && merged > 1) cause.merged = merged;
  if (signal.kind === 'tool_approval') cause.approvals = decisionRecords(signal);
  if (outcome.status !== undefined) cause.summary = baseSummary(outcome.status, decided, outcome.action);
  return cause;
}

/**
 * Freezes and marks (core's `frozenJsonValue`) a completed cause whose every member is a string, a
 * whole number or a marked value — its summary marked already, its signal's payload a string or
 * absent, no approvals — so that a store shares it instead of copying it with every save (the
 * common case: a user message's turn that did nothing but reply). Any other cause is left as it
 * is (a store copies it). Returns `cause`.
 * @internal
 */
export function sealedCause(cause: SessionCause): SessionCause {
  const { signal, summary } = cause;
  if (summary === undefined || !isJsonRecord(summary)) return cause;
  if (cause.approvals !== undefined || cause.forkedFrom !== undefined) return cause;
  if (signal !== undefined) {
    if (signal.payload !== undefined && typeof signal.payload !== 'string') return cause;
    frozenJsonValue(signal);
  }
  return frozenJsonValue(cause);
}

/** A summary's start: status, route and action, nothing done yet. */
function baseSummary(status: Outcome['status'], decided: Outcome['decidedBy'], action: Action | undefined): RunSummary {
  const summary = new SummaryRecord(status, NONE);
  if (decided !== undefined) summary.route = routeOf(decided);
  if (action !== undefined) summary.action = actionText(action);
  return summary;
}

/** An action as `RunSummary.action` writes it: `continue`, `transition:<target>`, `reject:<reason>`, `custom:<name>`, a stop. @internal */
function actionText(action: Action): string {
  switch (action.type) {
    case 'transition':
      return `transition:${action.target}`;
    case 'reject':
      return `reject:${action.reason}`;
    case 'custom':
      return `custom:${action.name}`;
    default:
      return action.type;
  }
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

import {
  formatAction,
  type Action,
  type Clock,
  type RunnerEvent,
  type Signal,
  type TimelineEntry as RunnerTimelineEntry,
} from '@signalyard/core';
import { isoAt } from '@signalyard/core/internal';
import { errorData, jsonSafe } from './json-safe.js';

/** One route looked at for a decision, when the runner reports them (`considered` on `route_decided`), made plain. */
interface ConsideredEntry {
  readonly tier: string;
  readonly routeName: string | null;
  readonly outcome: string;
}

/** What a timeline entry holds besides its place: one of the runner events, made plain JSON. */
type EntryDetail =
  | { readonly type: 'signal'; readonly kind: string; readonly text?: string; readonly payload: unknown }
  | {
      readonly type: 'route';
      readonly kind: string;
      readonly action: string;
      readonly tier: string | null;
      readonly routeName: string | null;
      /** Every route looked at, when the runner reported them; `null` when it did not. */
      readonly considered: readonly ConsideredEntry[] | null;
    }
  | {
      readonly type: 'transition';
      readonly from: string;
      readonly action: string;
      readonly to: string;
      readonly guard: string | null;
    }
  | { readonly type: 'engine'; readonly event: unknown }
  | {
      readonly type: 'outcome';
      readonly status: string;
      readonly action: string;
      readonly tier: string | null;
      readonly routeName: string | null;
      /** From the signal's arrival to its outcome; `null` when the arrival was not seen. */
      readonly durationMs: number | null;
      readonly error: unknown;
      readonly pendingApprovals: number;
    }
  | { readonly type: 'unrouted'; readonly kind: string }
  | { readonly type: 'rewound'; readonly version: number; readonly rewoundTo: number };

/** One entry of a session's timeline, as the page receives it. */
export type TimelineEntry = EntryDetail & {
  /** Increases by one with every entry of this inspector, across sessions. */
  readonly seq: number;
  /** ISO-8601 time the inspector saw the event. */
  readonly at: string;
  readonly sessionKey: string;
  readonly agentId: string;
};

/** Engine events that carry no decision (a streamed text fragment): not kept. */
const QUIET_ENGINE_EVENTS: ReadonlySet<string> = new Set(['text_delta', 'stage_delta']);

/**
 * The inspector's own bounded log of recent runner events per session (`limit` entries each, the
 * sessions seen least recently dropped beyond `maxSessions`): the page's live timeline over a
 * runner without `timeline()`, holding only what happened since the inspector started. Entries
 * are stamped, and durations measured from a signal's `signal_received` to its `outcome`, with
 * `clock`.
 */
export class EventLog {
  readonly #limit: number;
  readonly #maxSessions: number;
  readonly #clock: Clock;
  readonly #bySession = new Map<string, TimelineEntry[]>();
  readonly #arrivals = new WeakMap<Signal, number>();
  #seq = 0;

  constructor(opts: { limit: number; maxSessions: number; clock: Clock }) {
    this.#limit = opts.limit;
    this.#maxSessions = opts.maxSessions;
    this.#clock = opts.clock;
  }

  /** Records `event`; returns its entry, or `undefined` for an event the timeline does not show. */
  add(event: RunnerEvent): TimelineEntry | undefined {
    const now = this.#clock.now();
    if (event.type === 'signal_received') this.#arrivals.set(event.signal, now);
    const arrived =
      event.type === 'outcome' && event.signal !== undefined ? this.#arrivals.get(event.signal) : undefined;
    const durationMs = arrived === undefined ? undefined : Math.max(0, now - arrived);
    const entry = pageEntryOf({ seq: this.#seq + 1, at: isoAt(now), event, durationMs });
    if (entry === undefined) return undefined;
    this.#seq++;
    let list = this.#bySession.get(entry.sessionKey);
    if (list === undefined) {
      list = [];
    } else {
      this.#bySession.delete(entry.sessionKey); // re-inserted below: most recent last
    }
    this.#bySession.set(entry.sessionKey, list);
    list.push(entry);
    if (list.length > this.#limit) list.splice(0, list.length - this.#limit);
    if (this.#bySession.size > this.#maxSessions) {
      const oldest = this.#bySession.keys().next().value;
      if (oldest !== undefined) this.#bySession.delete(oldest);
    }
    return entry;
  }

  /** The session's entries, newest first. */
  entries(sessionKey: string): TimelineEntry[] {
    return [...(this.#bySession.get(sessionKey) ?? [])].reverse();
  }
}

/**
 * A runner's timeline entry (`runner.timeline()`, or an event the inspector numbered itself) as
 * the page shows it; `undefined` for an event the page does not show.
 */
export function pageEntryOf(entry: {
  readonly seq: number;
  readonly at: string;
  readonly event: RunnerEvent;
  readonly durationMs?: number | undefined;
}): TimelineEntry | undefined {
  const placed = detailOf(entry.event, entry.durationMs);
  if (placed === undefined) return undefined;
  return { ...placed.detail, seq: entry.seq, at: entry.at, sessionKey: placed.sessionKey, agentId: placed.agentId };
}

/** The page's entries from a runner's timeline (newest first, as given). */
export function pageEntries(entries: readonly RunnerTimelineEntry[]): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  for (const e of entries) {
    const entry = pageEntryOf(e);
    if (entry !== undefined) out.push(entry);
  }
  return out;
}

function detailOf(
  event: RunnerEvent,
  durationMs: number | undefined,
): { sessionKey: string; agentId: string; detail: EntryDetail } | undefined {
  switch (event.type) {
    case 'signal_received':
      return { ...event, detail: signalDetail(event.signal) };
    case 'route_decided':
      return { ...event, detail: routeDetail(event) };
    case 'transition_applied': {
      const { from, action, to, guard } = event.result;
      return { ...event, detail: { type: 'transition', from, action, to, guard: guard ?? null } };
    }
    case 'engine_event':
      if (QUIET_ENGINE_EVENTS.has(event.event.type)) return undefined;
      return { ...event, detail: { type: 'engine', event: jsonSafe(event.event) } };
    case 'outcome':
      return outcomeDetail(event, durationMs);
    case 'unrouted':
      return { ...event, detail: { type: 'unrouted', kind: event.signal.kind } };
    case 'session_rewound':
      return { ...event, detail: { type: 'rewound', version: event.version, rewoundTo: event.rewoundTo } };
    default:
      return undefined; // turn_start / turn_end (the outcome says it), warnings (no session)
  }
}

function outcomeDetail(event: Extract<RunnerEvent, { type: 'outcome' }>, durationMs: number | undefined) {
  const { outcome } = event;
  const detail: EntryDetail = {
    type: 'outcome',
    status: outcome.status,
    action: actionText(outcome.action),
    tier: outcome.decidedBy?.tier ?? null,
    routeName: outcome.decidedBy?.route.name ?? null,
    durationMs: durationMs ?? null,
    error: outcome.error === undefined ? null : errorData(outcome.error),
    pendingApprovals: outcome.pendingApprovals?.length ?? 0,
  };
  return { sessionKey: outcome.sessionKey, agentId: outcome.agentId, detail };
}

function signalDetail(signal: Signal): EntryDetail {
  const payload = signal.payload as { text?: unknown } | null | undefined;
  const text =
    typeof payload === 'object' && payload !== null && typeof payload.text === 'string' ? payload.text : undefined;
  return {
    type: 'signal',
    kind: signal.kind,
    ...(text !== undefined && { text }),
    payload: jsonSafe(signal.payload) ?? null,
  };
}

function routeDetail(event: Extract<RunnerEvent, { type: 'route_decided' }>): EntryDetail {
  return {
    type: 'route',
    kind: event.signal.kind,
    action: actionText(event.action),
    tier: event.tier ?? null,
    routeName: event.routeName ?? null,
    considered: consideredOf(event.considered),
  };
}

/**
 * The `explain()` list a runner puts on `route_decided` as `considered` while explaining
 * (`{ tier, route, outcome }`), made plain; `null` when absent. Read defensively: the runner is
 * taken structurally.
 */
function consideredOf(value: unknown): ConsideredEntry[] | null {
  if (!Array.isArray(value)) return null;
  const out: ConsideredEntry[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const c = item as { tier?: unknown; route?: { name?: unknown } | null; routeName?: unknown; outcome?: unknown };
    const name = typeof c.routeName === 'string' ? c.routeName : c.route?.name;
    out.push({
      tier: typeof c.tier === 'string' ? c.tier : 'unknown',
      routeName: typeof name === 'string' ? name : null,
      outcome: typeof c.outcome === 'string' ? c.outcome : 'unknown',
    });
  }
  return out;
}

function actionText(action: Action | undefined): string {
  try {
    return formatAction(action);
  } catch {
    return 'unknown';
  }
}

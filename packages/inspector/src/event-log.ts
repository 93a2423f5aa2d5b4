import { formatAction, type Action, type RunnerEvent, type Signal } from '@signalyard/core';
import { errorData, jsonSafe } from './json-safe.js';

/** One route looked at for a decision, when the runner reports them (`considered` on `route_decided`). */
interface ConsideredEntry {
  readonly tier: string;
  readonly routeName: string | null;
  readonly outcome: string;
}

/** What a timeline entry holds besides its place: one of the runner events, made plain JSON. */
export type EntryDetail =
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
 * A bounded log of recent runner events per session (`limit` entries each, the sessions seen
 * least recently dropped beyond `maxSessions`), the data behind the page's timeline while a
 * runner is live. Durations are measured from a signal's `signal_received` to its `outcome`.
 */
export class EventLog {
  readonly #limit: number;
  readonly #maxSessions: number;
  readonly #bySession = new Map<string, TimelineEntry[]>();
  readonly #arrivals = new WeakMap<Signal, number>();
  #seq = 0;

  constructor(opts: { limit: number; maxSessions: number }) {
    this.#limit = opts.limit;
    this.#maxSessions = opts.maxSessions;
  }

  /** Records `event`; returns its entry, or `undefined` for an event the timeline does not show. */
  add(event: RunnerEvent, now = Date.now()): TimelineEntry | undefined {
    const placed = this.#detailOf(event, now);
    if (placed === undefined) return undefined;
    const entry: TimelineEntry = {
      ...placed.detail,
      seq: ++this.#seq,
      at: new Date(now).toISOString(),
      sessionKey: placed.sessionKey,
      agentId: placed.agentId,
    };
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

  #detailOf(event: RunnerEvent, now: number): { sessionKey: string; agentId: string; detail: EntryDetail } | undefined {
    switch (event.type) {
      case 'signal_received':
        this.#arrivals.set(event.signal, now);
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
        return this.#outcome(event, now);
      case 'unrouted':
        return { ...event, detail: { type: 'unrouted', kind: event.signal.kind } };
      case 'session_rewound':
        return { ...event, detail: { type: 'rewound', version: event.version, rewoundTo: event.rewoundTo } };
      default:
        return undefined; // turn_start / turn_end (the outcome says it), warnings (no session)
    }
  }

  #outcome(event: Extract<RunnerEvent, { type: 'outcome' }>, now: number) {
    const { outcome } = event;
    const arrived = event.signal === undefined ? undefined : this.#arrivals.get(event.signal);
    const detail: EntryDetail = {
      type: 'outcome',
      status: outcome.status,
      action: actionText(outcome.action),
      tier: outcome.decidedBy?.tier ?? null,
      routeName: outcome.decidedBy?.route.name ?? null,
      durationMs: arrived === undefined ? null : Math.max(0, now - arrived),
      error: outcome.error === undefined ? null : errorData(outcome.error),
      pendingApprovals: outcome.pendingApprovals?.length ?? 0,
    };
    return { sessionKey: outcome.sessionKey, agentId: outcome.agentId, detail };
  }
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
    considered: consideredOf((event as { considered?: unknown }).considered),
  };
}

/**
 * The `explain()` list a runner may put on `route_decided` as `considered` (the router's
 * `RouteDecision.considered`: `{ tier, route, outcome }`), made plain; `null` when absent.
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

import type { RunnerEvent, Signal, TimelineEntry, TimelineEvent } from '@signalyard/core';

/** The bounds of the recent-events log: entries per session, sessions kept. @internal */
export interface TimelineBounds {
  readonly limit: number;
  readonly sessions: number;
}

/** The default bounds: the last 200 events of the 1,000 most recently active sessions. @internal */
export const DEFAULT_TIMELINE: TimelineBounds = Object.freeze({ limit: 200, sessions: 1000 });

/** An entry as kept: its time as a number, made an ISO string only when read. */
interface Kept {
  readonly seq: number;
  readonly time: number;
  readonly event: TimelineEvent;
  readonly durationMs: number | undefined;
}

/** Engine events that carry no decision (a streamed text fragment): not kept. */
const QUIET_ENGINE_EVENTS: ReadonlySet<string> = new Set(['text_delta', 'stage_delta']);

/**
 * The bounded log of recent events per session behind `runner.timeline()`: at most `limit`
 * entries per session (the oldest dropped) for the `sessions` most recently active sessions (the
 * least recently active forgotten whole), so its memory is bounded whatever the traffic. It is
 * the runner's first listener, so an entry is recorded before any other listener sees its event.
 * @internal
 */
export class EventTimeline {
  readonly #bounds: TimelineBounds;
  /** Sessions in order of last activity, least recent first (a Map keeps insertion order). */
  readonly #bySession = new Map<string, Kept[]>();
  readonly #arrivals = new WeakMap<Signal, number>();
  #mostRecent: string | undefined;
  #seq = 0;

  constructor(bounds: TimelineBounds) {
    this.#bounds = bounds;
  }

  /** Records `event` when the timeline keeps its kind. */
  record(event: RunnerEvent, now = Date.now()): void {
    const kept = keptEvent(event);
    if (kept === undefined) return;
    const key = kept.type === 'outcome' ? kept.outcome.sessionKey : kept.sessionKey;
    let durationMs: number | undefined;
    if (kept.type === 'signal_received') this.#arrivals.set(kept.signal, now);
    else if (kept.type === 'outcome' && kept.signal !== undefined) {
      const arrived = this.#arrivals.get(kept.signal);
      if (arrived !== undefined) durationMs = Math.max(0, now - arrived);
    }
    // A session becomes the most recently active when a signal arrives (once per signal, not per event).
    const list = (kept.type === 'signal_received' ? undefined : this.#bySession.get(key)) ?? this.#touch(key);
    list.push({ seq: ++this.#seq, time: now, event: kept, durationMs });
    if (list.length > this.#bounds.limit) list.shift();
  }

  /** The session's most recent `limit` entries, newest first (empty for a session not kept). */
  entries(key: string, limit: number): TimelineEntry[] {
    const list = this.#bySession.get(key);
    if (list === undefined) return [];
    const out: TimelineEntry[] = [];
    for (let i = list.length - 1; i >= 0 && out.length < limit; i--) {
      const { seq, time, event, durationMs } = list[i] as Kept;
      out.push({ seq, at: new Date(time).toISOString(), event, ...(durationMs !== undefined && { durationMs }) });
    }
    return out;
  }

  /** Forgets the session's entries (it was deleted). */
  forget(key: string): void {
    this.#bySession.delete(key);
    if (this.#mostRecent === key) this.#mostRecent = undefined;
  }

  /** How many sessions are kept. */
  get size(): number {
    return this.#bySession.size;
  }

  /** The session's list, made the most recently active; the least recently active dropped beyond the bound. */
  #touch(key: string): Kept[] {
    let list = this.#bySession.get(key);
    if (key === this.#mostRecent && list !== undefined) return list;
    if (list === undefined) list = [];
    else this.#bySession.delete(key);
    this.#bySession.set(key, list);
    this.#mostRecent = key;
    if (this.#bySession.size > this.#bounds.sessions) {
      const oldest = this.#bySession.keys().next().value as string;
      this.#bySession.delete(oldest);
    }
    return list;
  }
}

/** `event` when the timeline keeps it, else `undefined`. */
function keptEvent(event: RunnerEvent): TimelineEvent | undefined {
  switch (event.type) {
    case 'engine_event':
      return QUIET_ENGINE_EVENTS.has(event.event.type) ? undefined : event;
    case 'signal_received':
    case 'route_decided':
    case 'transition_applied':
    case 'outcome':
    case 'unrouted':
    case 'session_rewound':
      return event;
    default:
      return undefined; // turn_start / turn_end (the outcome says how it ended), warnings (no session)
  }
}

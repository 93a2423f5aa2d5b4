import type { RunnerEvent, TimelineEntry as RunnerTimelineEntry } from '@signalyard/core';
import { pageEntries, pageEntryOf, type TimelineEntry } from './event-log.js';

/** Where the page's timeline comes from while live: the runner's own log, or the inspector's. */
export interface TimelineFeed {
  /** The page entry for an event just emitted (to broadcast), or `undefined` when it is not shown. */
  add(event: RunnerEvent): TimelineEntry | undefined;
  /** The session's recent entries, newest first. */
  entries(sessionKey: string): TimelineEntry[];
}

/** A runner's `timeline()`, as the inspector calls it. */
export type TimelineMethod = (sessionKey: string, opts?: { limit?: number }) => readonly RunnerTimelineEntry[];

/**
 * The page's timeline from the runner's own bounded log (`runner.timeline()`): a page opened
 * mid-run catches up with what happened before the inspector started, and every entry keeps the
 * runner's `seq`, `at` and `durationMs`. The runner records an entry before any listener sees its
 * event, so the entry of an event just received is the session's newest.
 */
export class RunnerTimelineFeed implements TimelineFeed {
  readonly #timeline: TimelineMethod;
  readonly #limit: number;

  constructor(timeline: TimelineMethod, limit: number) {
    this.#timeline = timeline;
    this.#limit = limit;
  }

  add(event: RunnerEvent): TimelineEntry | undefined {
    const key =
      event.type === 'outcome' ? event.outcome.sessionKey : 'sessionKey' in event ? event.sessionKey : undefined;
    if (key === undefined) return undefined;
    const [newest] = this.#timeline(key, { limit: 1 });
    // Not kept by the runner (a streamed text fragment, turn_start): not shown either.
    return newest?.event === event ? pageEntryOf(newest) : undefined;
  }

  entries(sessionKey: string): TimelineEntry[] {
    return pageEntries(this.#timeline(sessionKey, { limit: this.#limit }));
  }
}

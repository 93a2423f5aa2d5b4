import type { RunnerEvent } from './runner-event.js';

/**
 * The runner events a session's timeline keeps: what happened to its signals (arrival, route
 * decision, transitions, engine events such as handoffs, tool calls and approvals, outcome,
 * rewinds). Streamed text fragments and warnings are not kept.
 */
export type TimelineEvent = Extract<
  RunnerEvent,
  {
    /** The kinds of events a timeline keeps. */
    readonly type:
      | 'signal_received'
      | 'route_decided'
      | 'transition_applied'
      | 'engine_event'
      | 'outcome'
      | 'unrouted'
      | 'session_rewound';
  }
>;

/**
 * One entry of a live session's recent-events log (`runner.timeline(sessionKey)`): a runner
 * event, when it happened and its place in the runner's order.
 */
export interface TimelineEntry {
  /** Increases by one with every entry the runner records, across sessions: a stable id for the entry. */
  readonly seq: number;
  /** When the runner emitted the event (ISO-8601). */
  readonly at: string;
  /** The event, as listeners received it. */
  readonly event: TimelineEvent;
  /**
   * On an `outcome`: milliseconds from the signal's arrival (`signal_received`) to its outcome;
   * absent when the arrival was not recorded.
   */
  readonly durationMs?: number;
}

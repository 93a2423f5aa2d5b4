import type { Action } from './action.js';
import type { TransitionResult } from './execution-strategy.js';
import type { ConsideredRoute, Tier } from './route.js';
import type { Outcome } from './outcome.js';
import type { SessionCause } from './session-checkpoint.js';
import type { Signal } from './signal.js';

export type { Outcome, OutcomeStatus } from './outcome.js';

/** An event of a crew or pipeline engine, forwarded by the runner. */
export type EngineEvent = {
  /** The event's kind (`handoff`, `stage_end`, …); the other fields depend on it. */
  readonly type: string;
} & Readonly<Record<string, unknown>>;

/**
 * The runner's one inspection channel: a discriminated union of everything that happens to a
 * signal, emitted synchronously to listeners in order. A listener that throws is reported as a
 * `warning` event and never breaks dispatch.
 */
export type RunnerEvent =
  | {
      /** A signal arrived for a session, before it is routed. */
      readonly type: 'signal_received';
      /** The session the event is about. */
      readonly sessionKey: string;
      /** The agent of that session. */
      readonly agentId: string;
      /** The signal being applied. */
      readonly signal: Signal;
    }
  | {
      /** The session's router chose an action for the signal. */
      readonly type: 'route_decided';
      /** The session the event is about. */
      readonly sessionKey: string;
      /** The agent of that session. */
      readonly agentId: string;
      /** The signal being applied. */
      readonly signal: Signal;
      /** The action chosen; `undefined` when no route matched. */
      readonly action: Action | undefined;
      /** The tier of the route that decided; absent when unrouted or a runner default applied. */
      readonly tier?: Tier;
      /** The name of the route that decided, when it has one. */
      readonly routeName?: string;
      /**
       * Every route of the signal's kind that was looked at, in evaluation order, with why each
       * did or did not win (the router's `explain()` list: `matched`, `predicate_false`,
       * `outranked`, `shadowed_by_higher_tier`). Computed in the same routing pass as the
       * decision, and present only while explaining is on: the runner was created with
       * `explainDecisions: true`, or a listener subscribed with `{ explainDecisions: true }`.
       * Absent when routing itself failed (a predicate threw).
       */
      readonly considered?: readonly ConsideredRoute[];
    }
  | {
      /** A `transition` action was executed on the session's strategy. */
      readonly type: 'transition_applied';
      /** The session the event is about. */
      readonly sessionKey: string;
      /** The agent of that session. */
      readonly agentId: string;
      /** The transition made. */
      readonly result: TransitionResult;
    }
  | {
      /** The engine's turn started, or ended. */
      readonly type: 'turn_start' | 'turn_end';
      /** The session the event is about. */
      readonly sessionKey: string;
      /** The agent of that session. */
      readonly agentId: string;
      /** `turn_end`: how the turn ended (an `OutcomeStatus`). */
      readonly status?: string;
    }
  | {
      /** An event of the engine, forwarded as it happened (crew and pipeline events, `text_delta`s of a streamed turn). */
      readonly type: 'engine_event';
      /** The session the event is about. */
      readonly sessionKey: string;
      /** The agent of that session. */
      readonly agentId: string;
      /** The engine's event, as it emitted it. */
      readonly event: EngineEvent;
    }
  | {
      /** The signal is done: how it ended. */
      readonly type: 'outcome';
      /** The outcome, as `handle` / `dispatch` resolve it. */
      readonly outcome: Outcome;
      /** The signal this outcome is for: the Runner always sets it, non-enumerably (the event's own shape stays `{ type, outcome }`). */
      readonly signal?: Signal;
      /**
       * The cause the signal's final save recorded (its `summary`: the `RunSummary` replay.md
       * compares, its `at`, its `signal` with the payload kept): the Runner sets it, non-enumerably
       * like `signal`, when the signal's application ended with a save that has a `summary`; absent
       * when nothing was saved (a signal settled without a save, a save the store refused). A
       * merged turn (`whenBusy: 'collect'`) saves once: its cause rides on the outcome of the
       * member it names (the last), not on the others. For
       * plugins that record turns (`@signalyard/replay`'s `cassetteRecorder`). Read it, never change it.
       */
      readonly cause?: SessionCause;
    }
  | {
      /** No route matched and the signal's kind has no runner default. */
      readonly type: 'unrouted';
      /** The session the event is about. */
      readonly sessionKey: string;
      /** The agent of that session. */
      readonly agentId: string;
      /** The signal being applied. */
      readonly signal: Signal;
    }
  | {
      /** The session was rewound to an earlier version. */
      readonly type: 'session_rewound';
      /** The session the event is about. */
      readonly sessionKey: string;
      /** The agent of that session. */
      readonly agentId: string;
      /** The new version saved by the rewind. */
      readonly version: number;
      /** The version whose data it restored. */
      readonly rewoundTo: number;
    }
  | {
      /** Something went wrong without failing a signal (a listener threw, …). */
      readonly type: 'warning';
      /** What happened. */
      readonly message: string;
      /** The error behind it, when there is one. */
      readonly cause?: unknown;
    };

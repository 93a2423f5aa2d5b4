import type { Action } from './action.js';
import type { PendingApproval } from './approval.js';
import type { SignalyardError } from './errors/signalyard-error.js';
import type { TransitionResult } from './execution-strategy.js';
import type { ConsideredRoute, SignalRoute, Tier } from './route.js';
import type { Signal } from './signal.js';

/** How one signal ended. */
export type OutcomeStatus = 'completed' | 'stopped' | 'rejected' | 'unrouted' | 'paused' | 'failed';

/**
 * The result of one signal handled by a Runner. Failures are outcomes, not exceptions:
 * `rejected` means refused by policy, `failed` means something broke (see `error`).
 */
export interface Outcome {
  readonly sessionKey: string;
  readonly agentId: string;
  /** The action applied; `undefined` when unrouted. */
  readonly action: Action | undefined;
  /** The route that decided; `undefined` when unrouted or a runner default applied. */
  readonly decidedBy: { readonly tier: Tier; readonly route: SignalRoute } | undefined;
  readonly status: OutcomeStatus;
  readonly output?: unknown;
  readonly error?: SignalyardError;
  /** With status `paused`: the tool calls now waiting for a person's decision. */
  readonly pendingApprovals?: readonly PendingApproval[];
  /** A `collect` agent: how many user messages this engine run answered (2 or more; absent when 1). */
  readonly mergedWith?: number;
}

/** An event of a crew or pipeline engine, forwarded by the runner. */
export type EngineEvent = { readonly type: string } & Readonly<Record<string, unknown>>;

/**
 * The runner's one inspection channel: a discriminated union of everything that happens to a
 * signal, emitted synchronously to listeners in order. A listener that throws is reported as a
 * `warning` event and never breaks dispatch.
 */
export type RunnerEvent =
  | { readonly type: 'signal_received'; readonly sessionKey: string; readonly agentId: string; readonly signal: Signal }
  | {
      readonly type: 'route_decided';
      readonly sessionKey: string;
      readonly agentId: string;
      readonly signal: Signal;
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
      readonly type: 'transition_applied';
      readonly sessionKey: string;
      readonly agentId: string;
      readonly result: TransitionResult;
    }
  | {
      readonly type: 'turn_start' | 'turn_end';
      readonly sessionKey: string;
      readonly agentId: string;
      readonly status?: string;
    }
  | {
      readonly type: 'engine_event';
      readonly sessionKey: string;
      readonly agentId: string;
      readonly event: EngineEvent;
    }
  | {
      readonly type: 'outcome';
      readonly outcome: Outcome;
      /** The signal this outcome is for: the Runner always sets it, non-enumerably (the event's own shape stays `{ type, outcome }`). */ readonly signal?: Signal;
    }
  | { readonly type: 'unrouted'; readonly sessionKey: string; readonly agentId: string; readonly signal: Signal }
  | {
      readonly type: 'session_rewound';
      readonly sessionKey: string;
      readonly agentId: string;
      /** The new version saved by the rewind. */
      readonly version: number;
      /** The version whose data it restored. */
      readonly rewoundTo: number;
    }
  | { readonly type: 'warning'; readonly message: string; readonly cause?: unknown };

import type { Action } from './action.js';
import type { PendingApproval } from './approval.js';
import type { SignalyardError } from './errors/signalyard-error.js';
import type { SignalRoute, Tier } from './route.js';

/** How one signal ended. */
export type OutcomeStatus = 'completed' | 'stopped' | 'rejected' | 'unrouted' | 'paused' | 'failed';

/**
 * The result of one signal handled by a Runner. Failures are outcomes, not exceptions:
 * `rejected` means refused by policy, `failed` means something broke (see `error`).
 */
export interface Outcome {
  /** The session the signal was applied to. */
  readonly sessionKey: string;
  /** The agent of that session. */
  readonly agentId: string;
  /** The action applied; `undefined` when unrouted. */
  readonly action: Action | undefined;
  /** The route that decided; `undefined` when unrouted or a runner default applied. */
  readonly decidedBy:
    | {
        /** The tier of the deciding route. */
        readonly tier: Tier;
        /** The route that decided. */
        readonly route: SignalRoute;
      }
    | undefined;
  /** How the signal ended. */
  readonly status: OutcomeStatus;
  /** What the action produced: the engine turn's `output`, a `TransitionResult`, a custom action handler's return value. */
  readonly output?: unknown;
  /** With status `failed` (and a refused transition's `rejected`): what went wrong. */
  readonly error?: SignalyardError;
  /** With status `paused`: the tool calls now waiting for a person's decision. */
  readonly pendingApprovals?: readonly PendingApproval[];
  /** A `collect` agent: how many user messages this engine run answered (2 or more; absent when 1). */
  readonly mergedWith?: number;
}

import type { Action, Outcome, PendingApproval } from '@signalyard/core';
import type { RouteMatch } from '@signalyard/router';

/** The parts of an outcome besides its owner. @internal */
export interface OutcomeParts {
  readonly status: Outcome['status'];
  /** The action applied (a runner default shows as its action with no `match`). */
  readonly action?: Action | undefined;
  /** The route that decided it, when one did. */
  readonly match?: RouteMatch | undefined;
  /** Wrapped as a `RunnerError` with `ENGINE_FAILED` unless it is a `SignalyardError`. */
  readonly error?: unknown;
  /** Present only when given (`undefined` included). */
  readonly output?: unknown;
  /** A paused turn's pending approvals (present only when given). */
  readonly pendingApprovals?: readonly PendingApproval[];
}

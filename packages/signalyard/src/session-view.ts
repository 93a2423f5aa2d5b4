import type { ChatMessage, PendingApproval, SessionCheckpointV1, StrategySnapshot } from '@signalyard/core';

/** A session as the runner sees it: its checkpoint and its live queue. */
export interface SessionView {
  /** The session's canonical key, e.g. `'agent:support:main'`. */
  sessionKey: string;
  /** The id of the session's agent. */
  agentId: string;
  /** The checkpoint version (0 = never saved). */
  version: number;
  /**
   * The session's strategy as saved: its `type` and state (for an FSM, the current state name
   * and context), as returned by the strategy's `snapshot()`.
   */
  strategy: StrategySnapshot;
  /**
   * The session's messages, oldest first (user, assistant and tool messages), at most
   * `RunnerOptions.maxHistoryMessages`. Empty for a session that was never saved.
   */
  history: readonly ChatMessage[];
  /**
   * What the agent's engine saved as its state (a crew's position, a pipeline's progress): the
   * JSON the last turn returned as `state`. `undefined` until an engine turn saves one.
   */
  engineState: unknown;
  /** Tool calls waiting for a person's decision (empty when none). */
  pendingApprovals: readonly PendingApproval[];
  /** A turn is in flight. */
  busy: boolean;
  /** Signals waiting behind it. */
  queued: number;
}

/** A view of a stored checkpoint (its data decoded) with the session's live queue state. @internal */
export function viewOf(
  sessionKey: string,
  version: number,
  data: SessionCheckpointV1,
  live: { busy: boolean; queued: number },
): SessionView {
  return {
    sessionKey,
    agentId: data.agentId,
    version,
    strategy: data.strategy,
    history: data.history,
    engineState: data.engine,
    pendingApprovals: Array.isArray(data.pendingApprovals) ? data.pendingApprovals : [],
    ...live,
  };
}

import type { ChatMessage, PendingApproval, SessionCheckpointV1, StrategySnapshot } from '@signalyard/core';

/** A session as the runner sees it: its checkpoint and its live queue. */
export interface SessionView {
  sessionKey: string;
  agentId: string;
  /** The checkpoint version (0 = never saved). */
  version: number;
  strategy: StrategySnapshot;
  history: readonly ChatMessage[];
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

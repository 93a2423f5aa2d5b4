import type { PendingApproval } from './approval.js';
import type { ChatMessage } from './model.js';
import type { StrategySnapshot } from './execution-strategy.js';
import type { Tier } from './route.js';
import type { OutcomeStatus } from './runner-event.js';
import type { SignalKind } from './signal.js';

/**
 * Why a saved session version exists: the signal that produced it and how it ended, the
 * approvals it applied, or the fork or rewind that made it. Stored with every version.
 */
export interface SessionCause {
  /** ISO-8601 time of the save. */
  readonly at: string;
  /** The signal that produced this version; for a user message, the first 200 code units of its text. */
  readonly signal?: { readonly kind: SignalKind; readonly text?: string };
  readonly status?: OutcomeStatus;
  readonly tier?: Tier;
  readonly routeName?: string;
  /** A `tool_approval`'s decisions, with who made each. */
  readonly approvals?: readonly { readonly id: string; readonly approved: boolean; readonly by?: string }[];
  /** User messages merged into this turn (a `collect` agent). */
  readonly merged?: number;
  /** A fork's first version: where it was forked from. */
  readonly forkedFrom?: { readonly sessionKey: string; readonly version: number };
  /** A rewind's version: the version whose data it restored. */
  readonly rewoundTo?: number;
}

/**
 * What a Runner saves for a session, format version 1. Fields a newer release adds are kept
 * by older readers (stores never drop unknown top-level fields).
 */
export interface SessionCheckpointV1 {
  readonly v: 1;
  readonly agentId: string;
  readonly strategy: StrategySnapshot;
  readonly history: readonly ChatMessage[];
  readonly engine: unknown;
  /** Tool calls waiting for a person's decision; absent or empty when none. */
  readonly pendingApprovals?: readonly PendingApproval[];
  /**
   * Approvals a `rewind` or `fork` retired (they were pending in the restored version): the
   * engine is told on its next turn to answer them as denied with `reason` (`stale: rewound`,
   * `stale: forked`). Absent or empty when none; cleared once a turn has delivered them.
   */
  readonly staleApprovals?: readonly { readonly id: string; readonly reason: string }[];
  /** Why this version exists. */
  readonly cause?: SessionCause;
}

/** One saved version of a session, as `Runner.history` lists it (newest first). */
export interface SessionVersion {
  readonly version: number;
  readonly updatedAt: string;
  readonly agentId: string;
  readonly cause?: SessionCause;
  readonly strategy: StrategySnapshot;
  readonly historyLength: number;
  /** How many approvals were pending in this version. */
  readonly pendingApprovals: number;
}

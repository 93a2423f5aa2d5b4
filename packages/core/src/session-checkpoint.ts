import type { PendingApproval } from './approval.js';
import type { ChatMessage } from './model.js';
import type { StrategySnapshot } from './execution-strategy.js';
import type { Tier } from './route.js';
import type { OutcomeJson } from './outcome-json.js';
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
  readonly signal?: {
    /** The signal's kind. */
    readonly kind: SignalKind;
    /** For a user message, the start of its text. */
    readonly text?: string;
  };
  /** How the signal ended. */
  readonly status?: OutcomeStatus;
  /** The tier of the route that decided (absent for a runner default). */
  readonly tier?: Tier;
  /** The name of the route that decided, when it has one. */
  readonly routeName?: string;
  /** A `tool_approval`'s decisions, with who made each. */
  readonly approvals?: readonly {
    /** The approval's id. */
    readonly id: string;
    /** Whether the call was approved. */
    readonly approved: boolean;
    /** Who decided, when the decision said. */
    readonly by?: string;
  }[];
  /** User messages merged into this turn (a `collect` agent). */
  readonly merged?: number;
  /** A fork's first version: where it was forked from. */
  readonly forkedFrom?: {
    /** The session this one was forked from. */
    readonly sessionKey: string;
    /** The version of it that was copied. */
    readonly version: number;
  };
  /** A rewind's version: the version whose data it restored. */
  readonly rewoundTo?: number;
  /**
   * What the turn did, in the `RunSummary` shape of replay.md, as far as this release records
   * it: the approval decisions the approvals policy made for the turn's tool calls.
   */
  readonly summary?: RunSummaryPart;
}

/**
 * One decision an approvals policy made for a tool call during a turn (`cause.summary.approvals`,
 * replay.md's `RunSummary.approvals` entry plus the deciding rule's name): `allow` ran it without
 * asking, `ask` held it for a person, `deny` refused it.
 */
export interface ApprovalSummary {
  /** The tool the call named. */
  readonly tool: string;
  /** What the policy decided. */
  readonly decision: 'allow' | 'deny' | 'ask';
  /** The `name` of the rule that decided, when a named rule did (absent: the policy's default, or an unnamed rule). */
  readonly rule?: string;
}

/** The part of replay.md's `RunSummary` a version's cause records (`cause.summary`). */
export interface RunSummaryPart {
  /** The approvals policy's decisions for the turn's tool calls, in the order they were made. */
  readonly approvals: readonly ApprovalSummary[];
}

/**
 * What a Runner saves for a session, format version 1. Fields a newer release adds are kept
 * by older readers (stores never drop unknown top-level fields).
 */
export interface SessionCheckpointV1 {
  /** The format version: 1. */
  readonly v: 1;
  /** The agent the session belongs to. */
  readonly agentId: string;
  /** The strategy instance's snapshot (an FSM's current state). */
  readonly strategy: StrategySnapshot;
  /** The conversation, oldest first. */
  readonly history: readonly ChatMessage[];
  /** The engine's own state (JSON): a paused crew agent, a pending pipeline envelope. */
  readonly engine: unknown;
  /** Tool calls waiting for a person's decision; absent or empty when none. */
  readonly pendingApprovals?: readonly PendingApproval[];
  /**
   * Approvals a `rewind` or `fork` retired (they were pending in the restored version): the
   * engine is told on its next turn to answer them as denied with `reason` (`stale: rewound`,
   * `stale: forked`). Absent or empty when none; cleared once a turn has delivered them.
   */
  readonly staleApprovals?: readonly {
    /** The approval id. */
    readonly id: string;
    /** Why it is stale: `stale: rewound` or `stale: forked`. */
    readonly reason: string;
  }[];
  /** Why this version exists. */
  readonly cause?: SessionCause;
  /**
   * The `seq` (a decimal string) of the last inbox entry settled in this session (inbox.md
   * guarantee 2): a redelivered entry with `seq` at or below it is acknowledged without being
   * applied. Absent: nothing was settled through an inbox (checkpoints of earlier releases).
   */
  readonly inboxSeq?: string;
  /**
   * The inbox entry whose turn committed part of its effects (`ctx.commit`) without finishing:
   * redelivered, it is re-applied from the committed state without appending its user message
   * again. Cleared by the turn's final save.
   */
  readonly inboxPartial?: {
    /** The entry's `seq`, a decimal string. */
    readonly seq: string;
    /** The entry's receipt id. */
    readonly receiptId: string;
  };
  /**
   * The outcomes of the inbox entries settled by the save that wrote this version (the last
   * settling save; replaced by the next one), each as stored by `Inbox.putOutcome`, its output
   * capped at `maxOutcomeBytes`. A worker that finds an entry settled already (`seq` at or below
   * `inboxSeq`) stores the entry's outcome from here before acknowledging it, so an outcome lost
   * to a crash between the save and `putOutcome` is still delivered. Absent: none recorded
   * (checkpoints of earlier releases, saves without an inbox).
   */
  readonly inboxOutcomes?: readonly {
    /** The entry's receipt id. */
    readonly receiptId: string;
    /** The entry's `seq`, a decimal string. */
    readonly seq: string;
    /** The entry's outcome. */
    readonly outcome: OutcomeJson;
  }[];
}

/** One saved version of a session, as `Runner.history` lists it (newest first). */
export interface SessionVersion {
  /** The version number (1 for the first save). */
  readonly version: number;
  /** ISO-8601 time it was saved. */
  readonly updatedAt: string;
  /** The agent the session belongs to. */
  readonly agentId: string;
  /** Why this version exists. */
  readonly cause?: SessionCause;
  /** The strategy's snapshot in this version. */
  readonly strategy: StrategySnapshot;
  /** How many messages its history holds. */
  readonly historyLength: number;
  /** How many approvals were pending in this version. */
  readonly pendingApprovals: number;
}

import type { JsonValue, PendingApproval } from './approval.js';
import type { ChatMessage } from './model.js';
import type { StrategySnapshot } from './execution-strategy.js';
import type { Tier } from './route.js';
import type { OutcomeJson } from './outcome-json.js';
import type { OutcomeStatus } from './outcome.js';
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
    /**
     * The signal's payload as JSON (replay.md), passed through the runner's `redact` option when
     * it has one; absent when it was not JSON, or its JSON was longer than the runner's
     * `maxCausePayloadBytes` (then `payloadOmitted` says why), and in versions of earlier releases.
     */
    readonly payload?: JsonValue;
    /** Why `payload` is absent from a version that would have kept it: `too_large` or `not_json`. */
    readonly payloadOmitted?: 'too_large' | 'not_json';
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
   * What the signal's application did (replay.md's `RunSummary`): written by every final save of
   * a signal (versions with a `status`); absent from commits, forks, rewinds and versions of
   * earlier releases (whose summary, if any, held only `approvals`).
   */
  readonly summary?: RunSummary;
  /**
   * Why this version's turn cannot be rebuilt from the store alone (its model calls are not in
   * the history): `parallel_members` (a parallel group ran: members' replies are merged) or
   * `pipeline_stage_calls` (pipeline stages ran: their model calls are not stored). Absent: the
   * history holds every model reply of the turn.
   */
  readonly partial?: 'parallel_members' | 'pipeline_stage_calls';
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

/** One handoff of a turn (`RunSummary.handoffs`). */
export interface HandoffSummary {
  /** The agent handing off. */
  readonly from: string;
  /** The agent taking over. */
  readonly to: string;
  /**
   * What it stands for: the routing signal (a marker such as `[TO_BILLING]`, also when the model
   * called its transfer tool), the parallel group's name for a group member starting, or
   * `fallback` when nothing routed the reply.
   */
  readonly signal: string;
}

/** One tool call a model asked for during a turn (`RunSummary.toolCalls`). */
export interface ToolCallSummary {
  /** The agent whose model asked for it (absent when the engine has no agents of its own). */
  readonly agentId?: string;
  /** The tool's name. */
  readonly name: string;
  /** The call's arguments, as the model gave them. */
  readonly arguments: unknown;
}

/**
 * What one signal's application did, as a diff compares it (replay.md): how it ended, the route
 * that decided and the action applied, the handoffs, tool calls and approval decisions in order,
 * the visible reply (markers hidden) and the FSM state afterwards. Saved as `cause.summary`.
 */
export interface RunSummary {
  /** How the signal ended. */
  readonly status: OutcomeStatus;
  /** The route that decided (absent for a runner default or an unrouted signal). */
  readonly route?: {
    /** Its tier. */
    readonly tier: Tier;
    /** Its name (`''` for a route without one). */
    readonly name: string;
  };
  /** The action applied, as text: `continue`, `transition:<target>`, `reject:<reason>`, `custom:<name>`, `graceful_stop`, `force_stop`. */
  readonly action?: string;
  /** The handoffs between agents, in order. */
  readonly handoffs: readonly HandoffSummary[];
  /** The tool calls models asked for, in order (approved, held and refused ones too). */
  readonly toolCalls: readonly ToolCallSummary[];
  /** The approvals policy's decisions for the turn's tool calls, in the order they were made. */
  readonly approvals: readonly ApprovalSummary[];
  /** The visible reply (markers hidden), when the turn produced one. */
  readonly reply?: string;
  /** The FSM state after the signal, when the session's strategy is an FSM. */
  readonly fsmState?: string;
}

/**
 * The part of {@link RunSummary} the previous release recorded in `cause.summary` (approvals
 * only): what a reader of versions saved by that release can count on. Versions saved from this
 * release on carry the whole {@link RunSummary}.
 */
export type RunSummaryPart = Pick<RunSummary, 'approvals'>;

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
   * The outcomes of the inbox entries settled by the latest settling saves (the last one's, after
   * up to seven of those before it within 64 KiB of JSON, less those the saving worker has seen
   * stored already: usually one or two), each as stored by `Inbox.putOutcome`,
   * its output capped at `maxOutcomeBytes`: a worker stores an outcome after the settling save,
   * while the session's next entries are applied, so a crash can come after later saves. A worker that finds an entry settled already (`seq` at or below
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

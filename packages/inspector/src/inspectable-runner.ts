import type {
  ApprovalDecision,
  ChatMessage,
  Outcome,
  PendingApproval,
  RunnerEvent,
  SessionVersion,
  StrategySnapshot,
  TranscriptEntry,
} from '@signalyard/core';

/**
 * A session as the inspector reads it: the fields of the Runner's `SessionView` it shows.
 * `busy`, `queued` and `pendingApprovals` are optional so that a runner that does not track
 * them still fits.
 */
export interface InspectedSession {
  readonly sessionKey: string;
  readonly agentId: string;
  /** The checkpoint version (0 = never saved). */
  readonly version: number;
  readonly strategy: StrategySnapshot;
  readonly history: readonly ChatMessage[];
  /** Tool calls waiting for a person's decision. */
  readonly pendingApprovals?: readonly PendingApproval[];
  /** A turn is in flight. */
  readonly busy?: boolean;
  /** Signals waiting behind it. */
  readonly queued?: number;
}

/** One session as `listSessions` yields it. */
export interface InspectedListing {
  readonly sessionKey: string;
  readonly agentId: string;
  readonly version: number;
  readonly updatedAt: string;
}

/**
 * The part of a `Runner` (package `signalyard`) the inspector uses, taken structurally so the
 * inspector depends on `@signalyard/core` only: pass the Runner itself.
 *
 * Required: `on`, `listSessions`, `session`, `sessionAt`, `history`. Optional: `transcript`
 * (the chat as the agent's engine shows it), `fork` and `rewind` (the page's "fork from here"
 * and "rewind to here"), and `approve` (the Approve / Deny buttons). The page offers an action
 * only when the runner has the method.
 */
export interface InspectableRunner {
  /** Subscribes to every runner event; returns an unsubscribe function. */
  on(listener: (event: RunnerEvent) => void): () => void;
  listSessions(opts?: { prefix?: string; after?: string; limit?: number }): AsyncIterable<InspectedListing>;
  session(sessionKey: string): Promise<InspectedSession | undefined>;
  sessionAt(sessionKey: string, version: number): Promise<InspectedSession | undefined>;
  history(sessionKey: string, opts?: { before?: number; limit?: number }): AsyncIterable<SessionVersion>;
  transcript?(sessionKey: string): Promise<readonly TranscriptEntry[]>;
  fork?(from: string, to: string, opts?: { version?: number }): Promise<InspectedSession>;
  rewind?(sessionKey: string, version: number): Promise<InspectedSession>;
  approve?(
    sessionKey: string,
    decisions: readonly ApprovalDecision[],
    opts?: { by?: string; abortSignal?: AbortSignal },
  ): Promise<Outcome>;
}

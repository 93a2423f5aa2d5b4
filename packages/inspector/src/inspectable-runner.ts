import type {
  ApprovalDecision,
  ChatMessage,
  Outcome,
  PendingApproval,
  RunnerDescription,
  RunnerEvent,
  SessionVersion,
  StrategySnapshot,
  TimelineEntry,
  TranscriptEntry,
} from '@signalyard/core';

/**
 * A session as the inspector reads it: the fields of the Runner's `SessionView` it shows.
 * `busy`, `queued` and `pendingApprovals` are optional so that a runner that does not track
 * them still fits.
 */
export interface InspectedSession {
  /** The canonical session key. */
  readonly sessionKey: string;
  /** The agent serving the session. */
  readonly agentId: string;
  /** The checkpoint version (0 = never saved). */
  readonly version: number;
  /** The strategy's snapshot (an FSM's current state). */
  readonly strategy: StrategySnapshot;
  /** The chat history. */
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
  /** The canonical session key. */
  readonly sessionKey: string;
  /** The agent serving the session. */
  readonly agentId: string;
  /** The current checkpoint version. */
  readonly version: number;
  /** When the current version was saved (ISO-8601). */
  readonly updatedAt: string;
}

/**
 * The part of a `Runner` (package `signalyard`) the inspector uses, taken structurally so the
 * inspector depends on `@signalyard/core` only: pass the Runner itself.
 *
 * Required: `on`, `listSessions`, `session`, `sessionAt`, `history`. Optional: `transcript`
 * (the chat as the agent's engine shows it), `fork` and `rewind` (the page's "fork from here"
 * and "rewind to here"), `approve` (the Approve / Deny buttons), `timeline` (the runner's log of
 * recent events: a page opened mid-run catches up from it; without it, the page shows the events
 * seen since the inspector started) and `describe` (the agents' diagrams); and the `inbox`
 * property (the durable inbox's views). The page offers an action only when the runner has the
 * method.
 */
export interface InspectableRunner {
  /**
   * Subscribes to every runner event; returns an unsubscribe function. The inspector subscribes
   * with `{ explainDecisions: true }`, so that `route_decided` events carry `considered` (the
   * routes each decision beat) while it is attached.
   */
  on(listener: (event: RunnerEvent) => void, opts?: { explainDecisions?: boolean }): () => void;
  /** The stored sessions in key order (`Runner.listSessions`): the page's sessions list. */
  listSessions(opts?: { prefix?: string; after?: string; limit?: number }): AsyncIterable<InspectedListing>;
  /** A session's current state (`Runner.session`), or `undefined` when it was never saved. */
  session(sessionKey: string): Promise<InspectedSession | undefined>;
  /** A past version of a session (`Runner.sessionAt`): "view this version". */
  sessionAt(sessionKey: string, version: number): Promise<InspectedSession | undefined>;
  /** A session's kept versions, newest first, each with its cause (`Runner.history`). */
  history(sessionKey: string, opts?: { before?: number; limit?: number }): AsyncIterable<SessionVersion>;
  /** The chat as the agent's engine shows it (`Runner.transcript`): markers hidden, handoffs shown. */
  transcript?(sessionKey: string): Promise<readonly TranscriptEntry[]>;
  /** Copies a version into a new session (`Runner.fork`): "fork from here". */
  fork?(from: string, to: string, opts?: { version?: number }): Promise<InspectedSession>;
  /** Saves an old version as the newest (`Runner.rewind`): "rewind to here". */
  rewind?(sessionKey: string, version: number): Promise<InspectedSession>;
  /** Decides pending tool calls (`Runner.approve`): the Approve / Deny buttons. */
  approve?(
    sessionKey: string,
    decisions: readonly ApprovalDecision[],
    opts?: { by?: string; abortSignal?: AbortSignal },
  ): Promise<Outcome>;
  /** The session's recent events, newest first, each recorded before listeners see its event (`Runner.timeline`). */
  timeline?(sessionKey: string, opts?: { limit?: number }): readonly TimelineEntry[];
  /** The agents with their routes and diagrams (`Runner.describe`): the page's FSM, crew and pipeline diagrams. */
  describe?(): RunnerDescription;
  /**
   * The runner's durable inbox (`Runner.inbox`; `undefined` without one). Read duck-typed: when it
   * has `pending()`, `leases()` and `deadLetters()` (`SqliteInbox`, `PostgresInbox`,
   * `JetStreamInbox`, `MemoryInbox`), the page shows its entries waiting per session, the leases
   * and the dead letters without an `inbox` option; anything else is ignored (no inbox views).
   * Typed `unknown` so that a runner whose inbox is not inspectable still fits.
   */
  readonly inbox?: unknown;
}

import type {
  AcceptOptions,
  ApprovalDecision,
  Inbox,
  InboxReceipt,
  Outcome,
  RunnerDescription,
  RunnerEvent,
  SessionVersion,
  Signal,
  TimelineEntry,
  TranscriptEntry,
} from '@signalyard/core';
import type { InboundRoute, SessionKey } from '@signalyard/sessions';
import type { SessionView } from './session-view.js';
import type { TurnStream } from './turn-stream.js';

/** An inbound message: where it came from (`InboundRoute` of `@signalyard/sessions`) and its text. */
export interface InboundMessage extends InboundRoute {
  /**
   * What the person wrote. It becomes the payload's `text` of the `user_message` signal the
   * runner dispatches (the whole message is the payload), and the user message in the history.
   *
   * @example
   * ```ts
   * await runner.handle({ channel: 'cli', text: 'Where is my refund?' });
   * ```
   */
  text: string;
}

/**
 * One agent runtime: resolves inbound messages to agents and sessions, applies each session's
 * signals one at a time through its strategy, composed router and engine, and checkpoints every
 * session after every applied signal. Failures are outcomes: `handle` / `dispatch` reject only
 * for misuse (`RUNNER_CLOSED`, `RUNNER_INPUT_INVALID`).
 */
export interface Runner {
  /** Runs every plugin's `setup` once, in order. Idempotent; `handle` / `dispatch` call it if needed. */
  start(): Promise<void>;
  /** Resolves the message's agent and session, then dispatches `signal('user_message', message)`. */
  handle(message: InboundMessage, opts?: { abortSignal?: AbortSignal }): Promise<Outcome>;
  /** Applies `signal` to the session `sessionKey` (its agent: `opts.agentId`, else the key's). */
  dispatch(
    sessionKey: SessionKey | string,
    signal: Signal,
    opts?: { agentId?: string; abortSignal?: AbortSignal },
  ): Promise<Outcome>;
  /** {@link Runner.handle}, streamed: the turn's events as they happen, its outcome last. */
  stream(message: InboundMessage, opts?: { abortSignal?: AbortSignal }): TurnStream;
  /** {@link Runner.dispatch}, streamed. */
  streamDispatch(
    sessionKey: SessionKey | string,
    signal: Signal,
    opts?: { agentId?: string; abortSignal?: AbortSignal },
  ): TurnStream;
  /**
   * Decides pending tool approvals: dispatches `signal('tool_approval', { decisions, by })` to the
   * session. It goes through the three tiers like every signal, so a route can refuse an approver
   * (e.g. `reject('not a reviewer')` on `payload.by`). The runner checks the ids itself against
   * the session's `pendingApprovals`: when none names a pending approval, the outcome is
   * `rejected` with `reject('no_pending_approval')` and nothing runs; in a mix, the pending ones
   * are applied (unrouted, the default is `continue`: the engine resumes with them in
   * `ctx.approvals`) and the other ids are ignored and listed in `outcome.output.unknownApprovalIds`
   * (added to a plain-object output; `{ unknownApprovalIds }` without one, else `{ output,
   * unknownApprovalIds }`). Any runner over the same store can approve: the checkpoint is the truth.
   *
   * @throws RunnerError `RUNNER_INPUT_INVALID` (the promise rejects) when `decisions` is not a
   * non-empty list of `{ id, approved, reason? }` with distinct ids and each `reason` at most
   * 1,000 code units, or `by` is not a non-empty string of at most 200; `RUNNER_CLOSED` after
   * `close()`.
   * @example
   * ```ts
   * const outcome = await runner.approve('agent:support:main', [{ id: 'ap-1', approved: true }], { by: 'alice' });
   * ```
   */
  approve(
    sessionKey: SessionKey | string,
    decisions: readonly ApprovalDecision[],
    opts?: { by?: string; abortSignal?: AbortSignal },
  ): Promise<Outcome>;
  /** {@link Runner.approve}, streamed: the resumed turn's events as they happen, its outcome last. */
  streamApprove(
    sessionKey: SessionKey | string,
    decisions: readonly ApprovalDecision[],
    opts?: { by?: string; abortSignal?: AbortSignal },
  ): TurnStream;
  /**
   * The visible conversation of a session (for a page reload): the agent engine's `transcript`
   * when it has one (a crew's hides markers and shows handoffs), else its user and assistant
   * messages as they are. Empty for a session never saved.
   */
  transcript(sessionKey: SessionKey | string): Promise<TranscriptEntry[]>;
  /** The session's checkpoint and live state; `undefined` for a session never seen. */
  session(sessionKey: SessionKey | string): Promise<SessionView | undefined>;
  /**
   * The session's kept versions, newest first (the current one included), each with why it
   * exists (`cause`). `before` keeps versions lower than it; `limit` caps the count.
   */
  history(sessionKey: SessionKey | string, opts?: { before?: number; limit?: number }): AsyncIterable<SessionVersion>;
  /**
   * Version `version` of the session, read-only; `undefined` for a session that does not exist.
   * @throws RunnerError `VERSION_UNAVAILABLE` for a version the store no longer keeps.
   */
  sessionAt(sessionKey: SessionKey | string, version: number): Promise<SessionView | undefined>;
  /**
   * Copies version `opts.version` (default: current) of `from` into the new session `to`
   * (version 1, `cause.forkedFrom`); `from` is untouched. Pending approvals are not re-opened
   * unless `reissueApprovals`: then they are issued again under new ids (listed in the returned
   * view; the format is opaque), and a decision on an old id decides nothing in `to`.
   * @throws RunnerError `SESSION_EXISTS`, `SESSION_AGENT_MISMATCH`, `SESSION_NOT_FOUND`, `VERSION_UNAVAILABLE`.
   */
  fork(
    from: SessionKey | string,
    to: SessionKey | string,
    opts?: { version?: number; reissueApprovals?: boolean },
  ): Promise<SessionView>;
  /**
   * Saves a new version of the session whose data equals version `version`'s (`cause.rewoundTo`);
   * the versions in between stay, so a rewind can be undone. Waits its turn in the session's
   * queue; stop signals never cancel it; emits `session_rewound`. Pending approvals of that
   * version are not re-opened unless `reissueApprovals`: then they are issued again under new ids
   * (listed in the returned view; the format is opaque), and a decision on an old id decides nothing.
   * @throws RunnerError `SESSION_NOT_FOUND`, `VERSION_UNAVAILABLE`; `RUNNER_CLOSED` when the runner closes first.
   */
  rewind(sessionKey: SessionKey | string, version: number, opts?: { reissueApprovals?: boolean }): Promise<SessionView>;
  /** Deletes the session and its whole history, in its turn in the session's queue (like a rewind). */
  deleteSession(sessionKey: SessionKey | string): Promise<void>;
  /** The sessions in the store, in code-unit order of their keys, after the key `after` (a paging cursor). */
  listSessions(opts?: { prefix?: string; after?: string; limit?: number }): AsyncIterable<{
    /** The session's canonical key, e.g. `'agent:support:main'`. */
    sessionKey: string;
    /** The id of the session's agent. */
    agentId: string;
    /** The session's current checkpoint version (1 after its first save). */
    version: number;
    /** When that version was saved, as an ISO-8601 timestamp (`2026-11-26T10:22:35.123Z`). */
    updatedAt: string;
  }>;
  /**
   * Subscribes to every runner event (synchronous, in order). Returns an unsubscribe function.
   *
   * With `{ explainDecisions: true }`, the listener asks for explained decisions: while it is
   * subscribed, every `route_decided` event carries `considered` (the router's `explain()` list,
   * computed in the same routing pass), as with `createRunner({ explainDecisions: true })`.
   * Unsubscribing the last such listener turns it off again.
   * @throws RunnerError `RUNNER_INPUT_INVALID` for a listener that is not a function or bad options.
   * @example
   * ```ts
   * const off = runner.on((e) => {
   *   if (e.type === 'route_decided') console.log(e.routeName, e.considered?.map((c) => c.outcome));
   * }, { explainDecisions: true });
   * ```
   */
  on(listener: (event: RunnerEvent) => void, opts?: { explainDecisions?: boolean }): () => void;
  /** A buffered async iterable of runner events; ends on `abortSignal` or when the runner closes. */
  events(opts?: { abortSignal?: AbortSignal }): AsyncIterable<RunnerEvent>;
  /**
   * The recent events of a live session, newest first: its signals' arrivals, route decisions
   * (with `considered` while explaining is on), transitions, engine events (handoffs, tool calls,
   * approvals, pipeline stages), outcomes with `durationMs`, rewinds — at most `limit` (default:
   * every one kept). The runner keeps the last `RunnerOptions.timeline.limit` events (200) of the
   * `timeline.sessions` most recently active sessions (1,000), in memory, while it records: by
   * default while an inspector listens (a listener subscribed with `{ explainDecisions: true }`),
   * always with `timeline: true` (or bounds). An entry is recorded before the inspecting listener
   * sees its event, so a page opened mid-run catches up from here and continues with `on()`.
   * Empty for a session with no recent events, or with `timeline: false`.
   * @throws RunnerError `RUNNER_INPUT_INVALID` for a malformed session key or a `limit` that is not an integer >= 1.
   * @example
   * ```ts
   * for (const { at, event } of runner.timeline('agent:desk:main', { limit: 20 })) console.log(at, event.type);
   * ```
   */
  timeline(sessionKey: SessionKey | string, opts?: { limit?: number }): TimelineEntry[];
  /**
   * What this runner serves: each agent with its strategy type, the routes a fresh session is
   * routed by (name, kind, tier, priority, action, whether conditional; strategy, agent and
   * plugin tiers, each in evaluation order) and its diagrams as Mermaid text — the FSM when its
   * strategy is one, the crew or pipeline when its engine is `crewEngine` / `pipelineEngine` (or
   * any engine with `diagrams()`).
   * @throws RunnerError `STRATEGY_FACTORY_FAILED` when an agent's strategy factory throws.
   * @example
   * ```ts
   * const { agents } = runner.describe();
   * agents[0].diagrams.fsm; // 'stateDiagram-v2\n…'
   * ```
   */
  describe(): RunnerDescription;
  /**
   * Accepts `signal` for the session into the runner's durable inbox and resolves once it is
   * durable, with its receipt: from then on it is settled exactly once, in order, by whichever
   * worker holds the session's lease (inbox.md). Calls of one runner for one key keep their order.
   * With `opts.id` (a request id), a retry within the inbox's `dedupeWindowMs` returns the first
   * receipt; without it, an id is generated and reused for the runner's own retries.
   * @throws RunnerError `RUNNER_INPUT_INVALID` (a bad key, signal, payload that is not checkpoint
   * JSON, unknown agent, bad options), `RUNNER_CLOSED`; InboxError `INBOX_FULL` (with
   * `retryAfterMs`), `INBOX_UNAVAILABLE`, `INBOX_OUTCOME_UNKNOWN` (retry with the same id),
   * `INBOX_CONFIG_INVALID` on a runner without a durable inbox.
   * @example
   * ```ts
   * const receipt = await runner.accept('agent:main:cli:dm:ann', signal('user_message', { channel: 'cli', text: 'hi' }), { id: requestId });
   * const outcome = await runner.outcome(receipt.receiptId);
   * ```
   */
  accept(sessionKey: SessionKey | string, signal: Signal, opts?: AcceptOptions): Promise<InboxReceipt>;
  /**
   * {@link Runner.accept} for an inbound message: its agent and session resolved as
   * {@link Runner.handle} resolves them, the signal `user_message` with the message as payload.
   * @throws as {@link Runner.accept}.
   */
  acceptMessage(message: InboundMessage, opts?: { id?: string }): Promise<InboxReceipt>;
  /**
   * The outcome of an accepted entry, from any process: the live `Outcome` when this runner's
   * worker settled it, else rebuilt from the inbox's `OutcomeJson` (its error passes
   * `isSignalyardError`, with its code). `abortSignal` and `timeoutMs` end only this wait.
   * @throws InboxError `OUTCOME_EXPIRED` (kept `outcomeTtlMs`), `OUTCOME_TIMEOUT`,
   * `INBOX_CONFIG_INVALID` without a durable inbox; AbortedError `ABORTED`; RunnerError
   * `RUNNER_CLOSED` (also for a wait pending at `close()`), `RUNNER_INPUT_INVALID`.
   */
  outcome(receiptId: string, opts?: { abortSignal?: AbortSignal; timeoutMs?: number }): Promise<Outcome>;
  /**
   * A turn's stream again, from a durable inbox, in any process: after a reconnect (a phone
   * changing networks, a page reload) or from a process other than the one that accepted it
   * (inbox.md "Streams from any worker, resumable"). The events are those the settling worker
   * published, with the shapes of a local stream, ending after the `outcome` event.
   * - `{ receiptId }`: the receipt's events after `opts.from` — an offset from
   *   {@link TurnStream.offsetOf} of an earlier stream of the same receipt — or all of them
   *   without it, each exactly once.
   * - `{ sessionKey }`: the session's latest in-flight receipt (accepted, not yet settled, its
   *   turn started), from the first event of its latest attempt — what a client replaying a
   *   whole reply needs (the AI SDK's resume by chat id). With nothing in flight it ends at once.
   *
   * A `restarted` event means the turn started over on another worker (the one applying it died
   * or lost its lease): drop what was shown of the reply; the new attempt's events follow.
   * Events of older attempts are never yielded after it. When the stream ends without reading an
   * outcome (nothing in flight, or the receipt left the inbox and its events were pruned with
   * its outcome), the iteration ends without error and `outcome` rejects with InboxError
   * `OUTCOME_EXPIRED` (for a receipt whose outcome is still kept, the stream ends with it).
   * `opts.abortSignal` ends the reading (the iteration throws `ABORTED`); so does breaking out
   * of the last loop reading it.
   * @throws (from the iteration, `outcome` rejecting with it) RunnerError `RUNNER_INPUT_INVALID`
   * for a reference that is not `{ receiptId }` or `{ sessionKey }` (a malformed key), `from`
   * with a session key, bad options; `RUNNER_CLOSED`; InboxError `INBOX_CONFIG_INVALID` without
   * a durable inbox, `INBOX_INPUT_INVALID` for an offset the inbox never gave, `INBOX_UNAVAILABLE`.
   * @example
   * ```ts
   * // A client reconnects with the receipt and the offset of the last event it showed:
   * for await (const event of runner.resumeStream({ receiptId }, { from: lastOffset })) show(event);
   * // A page reload knows only its chat (the session): the in-flight reply, from its start.
   * for await (const event of runner.resumeStream({ sessionKey: 'agent:desk:web:dm:ann' })) show(event);
   * ```
   */
  resumeStream(
    ref: { receiptId: string } | { sessionKey: string },
    opts?: { from?: string; abortSignal?: AbortSignal },
  ): TurnStream;
  /**
   * The entries settled as poisoned (`INBOX_POISONED`: delivered more than `maxDeliveries`
   * times), oldest first, with their outcomes, while their outcome is kept.
   * @throws RunnerError `RUNNER_INPUT_INVALID`; InboxError `INBOX_CONFIG_INVALID` without a durable inbox.
   */
  deadLetters(opts?: { limit?: number }): AsyncIterable<{
    /** The poisoned entry's receipt. */
    receipt: InboxReceipt;
    /** Its stored outcome, rebuilt: `failed` with `INBOX_POISONED`. */
    outcome: Outcome;
  }>;
  /**
   * The durable inbox this runner was created with (`createRunner({ inbox })`), or `undefined`
   * when it has none (no `inbox` option, or a non-durable one, which the runner drops). Read-only,
   * for operator tools: the inspector (`startInspector({ runner })`) reads the entries waiting,
   * the leases and the dead letters from it when it has `pending()`, `leases()` and
   * `deadLetters()` (`SqliteInbox`, `PostgresInbox`, `JetStreamInbox`, `MemoryInbox`). Signals
   * go in through {@link Runner.accept} / {@link Runner.dispatch}, never through the inbox
   * directly (the runner validates them, and its worker holds the leases); the runner's
   * `close()` does not close it (its owner does).
   * @example
   * ```ts
   * const inbox = new SqliteInbox({ path: 'sessions.db' });
   * const runner = createRunner({ agents, store, inbox });
   * runner.inbox === inbox; // true
   * const waiting = await inbox.pending({ limit: 50 }); // what the inspector lists
   * ```
   */
  readonly inbox: Inbox | undefined;
  /** Stops accepting signals, lets in-flight turns finish (up to `closeTimeoutMs`), disposes plugins. */
  close(): Promise<void>;
}

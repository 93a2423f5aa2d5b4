import type {
  Action,
  AgentDiagrams,
  ApprovalDecision,
  ChatMessage,
  Clock,
  PendingApproval,
  ExecutionStrategy,
  Signal,
  SignalRoute,
  TextSource,
  TranscriptEntry,
} from '@signalyard/core';

/**
 * What an engine sees during one turn (a `continue`). Its methods work detached
 * (`const { emit, commit } = ctx`). `emit`, `emitText`, `commit`, `idempotencyKey`, `abortSignal`
 * and `signals` are accessors, not own properties: an engine that wraps another and spreads the context passes them
 * on by name — `inner({ ...ctx, history, signals: ctx.signals, abortSignal: ctx.abortSignal, emit:
 * ctx.emit, emitText: ctx.emitText, commit: ctx.commit, idempotencyKey: ctx.idempotencyKey })`.
 */
export interface TurnContext {
  /** The canonical key of the session this turn runs for, e.g. `'agent:support:main'`. */
  readonly sessionKey: string;
  /** The id of the session's agent: the {@link AgentDefinition.id} whose engine runs. */
  readonly agentId: string;
  /** The signal being applied (in a merged turn, the last of {@link TurnContext.signals}). */
  readonly signal: Signal;
  /**
   * Every signal this turn answers, in arrival order: `[signal]`, or — for an agent with
   * `whenBusy: 'collect'` (or `'interrupt'`) — all the user messages merged into this one turn.
   */
  readonly signals: readonly Signal[];
  /** The session history, already including this signal's user message. Read-only: its messages are deeply frozen copies (unless one holds a `toJSON`, a class instance or the like), and then so is the list. */
  readonly history: readonly ChatMessage[];
  /** This engine's state from the checkpoint (`undefined` at first). */
  readonly state: unknown;
  /** The session's strategy: read it (`snapshot`, `canExecute`); don't execute — return `actions` instead. */
  readonly strategy: ExecutionStrategy;
  /** Fires on `force_stop`, a `close()` timeout, or the caller's own `abortSignal` — never for a `whenBusy: 'interrupt'`. */
  readonly abortSignal: AbortSignal;
  /** Forwards an event of the engine's (a crew handoff, a pipeline stage) as an `engine_event` RunnerEvent. */
  emit(event: { type: string } & Record<string, unknown>): void;
  /** True when someone reads this turn as a stream (`runner.stream` / `streamDispatch`): stream the model's reply. */
  readonly streaming: boolean;
  /**
   * The runner's clock (`createRunner({ clock })`): an engine that stamps times reads them here
   * (`crewEngine` passes it to its crew runs). Absent in a context not made by a Runner.
   */
  readonly clock?: Clock;
  /**
   * A piece of the reply's visible text, as it is produced: a `text_delta` TurnEvent for the
   * stream and an `engine_event` of type `text_delta` for plugins. A no-op when not streaming.
   */
  emitText(delta: string, source?: TextSource): void;
  /**
   * The approval decisions this turn must apply, in order: first a denial for every approval a
   * `rewind` or `fork` retired (`{ id, approved: false, reason: 'stale: rewound' }` or
   * `'stale: forked'`: the engine answers those calls as denied and never runs them), then the
   * decisions of a `tool_approval` signal (`Runner.approve`). Empty for most turns. Pass them
   * straight to an executor that resumes with decisions (a crew's `execute(input, { approvals })`).
   */
  readonly approvals: readonly ApprovalDecision[];
  /**
   * The approvals pending in the session checkpoint when the turn started (empty when none).
   * Here and in `approvals`, ids are the engine's own: after a `fork` / `rewind` with
   * `reissueApprovals` the runner shows new ids to people and translates them back.
   */
  readonly pendingApprovals: readonly PendingApproval[];
  /**
   * Saves the session now, compare-and-set: `state` as this engine's state, the history so far
   * (with this signal's user message), the strategy as it is. Call it before a side effect that
   * must not run twice (the durable claim of an approved tool call). A later failure or stop of
   * the turn discards only what came after the commit; the turn's final save builds on it.
   *
   * A commit also records what the turn has taken in: the approvals answered by this turn's
   * decisions are no longer pending (a second runner approving the same call is then refused
   * with `no_pending_approval`), and stale approvals count as delivered. Commits of one turn run
   * one after another.
   *
   * @throws CheckpointConflictError when another writer saved the session first: stop without
   * side effects (throw it, or return); the runner reloads the session and applies the signal
   * again, as for any conflict. AbortedError when the turn was stopped; RunnerError
   * `COMMIT_REFUSED` after the turn ended; the store's error when the state cannot be stored.
   */
  commit(state: unknown): Promise<void>;
  /**
   * A key for a downstream API that deduplicates (a payment, an email): `<receiptId>:<name>`,
   * where `receiptId` is the inbox entry's — the same on every redelivery of the entry (a worker
   * that died mid-turn, a save refused after a lease was lost, a conflict) — so a call repeated
   * after a crash is recognised downstream. Without a durable inbox, `receiptId` is a fresh UUID
   * per signal, kept while the signal is applied again after a conflict. In a merged turn
   * (`whenBusy: 'collect'`), the receipt is {@link TurnContext.signal}'s (the last). A crew's tool calls get
   * `ToolContext.idempotencyKey` = `ctx.idempotencyKey('tool') + ':' + n` (`crewEngine` passes it).
   *
   * @example
   * ```ts
   * await payments.charge({ amount, idempotencyKey: ctx.idempotencyKey('charge') });
   * ```
   * @throws RunnerError `RUNNER_INPUT_INVALID` when `name` is not a non-empty string.
   */
  readonly idempotencyKey: (name: string) => string;
}

/**
 * What an engine returns from a turn. Everything is optional: `{}` is a turn that did nothing.
 */
export interface TurnResult {
  /** Returned as the outcome's `output`. */
  output?: unknown;
  /** Appended to the session history after the turn. */
  messages?: readonly ChatMessage[];
  /** Saved as this engine's state (JSON). When the key is absent, the previous state is kept. */
  state?: unknown;
  /** `paused`: a crew waiting for a signal, a pipeline interrupt. Default `completed`. */
  status?: 'completed' | 'paused';
  /**
   * Applied in order after the turn, all or nothing: e.g. `[Action.transition('triage')]`.
   * `transition` executes on the session's strategy; `custom` runs its handler; `graceful_stop` /
   * `force_stop` stop the signals queued behind this one; `reject` refuses the turn (outcome
   * `rejected`, nothing saved). `continue` is not allowed.
   */
  actions?: readonly Action[];
  /**
   * Tool calls now waiting for a person's decision. Saved as the checkpoint's top-level
   * `pendingApprovals` (what `SessionView`, `Runner.history`, the inspector and the CLI read);
   * when non-empty the outcome is `paused` with these approvals. A turn that returns none (or
   * omits the key) clears them. Each needs a non-empty `id` unique in the list.
   */
  pendingApprovals?: readonly PendingApproval[];
  /**
   * The turn's visible reply (routing markers hidden), for the version's `cause.summary.reply`.
   * Default: the content of the last assistant message in `messages` that asks for no tools.
   * A crew engine gives the crew's reply with its markers hidden.
   */
  reply?: string;
}

/** Runs one turn. (A plain, non-promise `TurnResult` is accepted too.) */
export type EngineFn = (ctx: TurnContext) => Promise<TurnResult>;

/**
 * An object with a `turn` function: what a `continue` runs. A tool call runs at most once only
 * when the engine commits the decision with `ctx.commit` before running it; without that commit
 * hook it runs at least once across crashes.
 */
export interface Engine {
  /**
   * Runs one turn: called once per `continue` with the turn's {@link TurnContext}; what it
   * returns (or resolves to) is applied after the turn. A throw or rejection ends the signal
   * with outcome `failed` (its `error` the thrown `SignalyardError`, or an `ENGINE_FAILED` one
   * wrapping anything else); nothing of the turn is applied beyond what `ctx.commit` saved.
   *
   * @example
   * ```ts
   * const engine: Engine = {
   *   turn: async (ctx) => ({ messages: [{ role: 'assistant', content: `echo: ${ctx.history.at(-1)?.content}` }] }),
   * };
   * ```
   */
  turn: EngineFn;
  /**
   * The visible conversation of a session from its history and this engine's state (for
   * `runner.transcript`, e.g. a page reload). Default: the user and assistant messages as they are.
   */
  transcript?(history: readonly ChatMessage[], state: unknown): TranscriptEntry[];
  /**
   * The engine's diagrams as Mermaid text, for `runner.describe()` (and through it the
   * inspector): a crew engine draws its crew, a pipeline engine its pipeline.
   */
  diagrams?(): Pick<AgentDiagrams, 'crew' | 'pipeline'>;
}

/**
 * One agent a Runner serves.
 *
 * @example
 * ```ts
 * const support: AgentDefinition = {
 *   id: 'support',
 *   strategy: () => supportFsm.create(),   // a FACTORY: one instance per session
 *   routes: [{ kind: SignalKind.UserMessage, action: Action.Continue }],
 *   engine: async (ctx) => ({ messages: [{ role: 'assistant', content: `echo: ${ctx.history.at(-1)?.content}` }] }),
 * };
 * ```
 */
export interface AgentDefinition {
  /** A canonical agent id: `normalizeAgentId(id) === id`. */
  id: string;
  /** A factory making one strategy instance per session. Default: `() => new DirectStrategy()`. */
  strategy?: () => ExecutionStrategy;
  /** The agent tier of every session's router. */
  routes?: readonly SignalRoute[];
  /** What a `continue` runs. */
  engine: Engine | EngineFn;
  /**
   * What a `user_message` that arrives while this agent's session is busy does (every other
   * signal kind always queues):
   * - `'queue'` (default): one turn per message, in arrival order.
   * - `'collect'`: messages that arrive while a turn runs wait; when it ends, each is appended to
   *   the history and routed on its own, and those routed to `continue` are answered by **one**
   *   engine turn (`TurnContext.signals`); each caller's outcome carries `mergedWith`.
   * - `'interrupt'`: a message routed to `continue` on arrival stops the running turn of a user
   *   message at its next safe point — before a model call or a tool call starts, never inside a
   *   tool call (its `abortSignal` does not fire; `crewEngine` knows the crew's safe points, any
   *   other engine runs to its end). What that turn completed (replies, tool calls and their
   *   results) is saved, its caller gets `stopped`, its message stays in the history; one turn
   *   then answers both, and messages arriving until it starts join it.
   *
   * Acts on messages queued in the same process; across processes a `SessionLock` still keeps
   * each process's order and every message exactly once in the history.
   */
  whenBusy?: WhenBusy;
}

/** What a user message arriving at a busy session does: see {@link AgentDefinition.whenBusy}. */
export type WhenBusy = 'queue' | 'collect' | 'interrupt';

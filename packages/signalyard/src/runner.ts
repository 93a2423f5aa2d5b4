import {
  AbortedError,
  MemoryCheckpointStore,
  describeValue,
  isSignalKind,
  signal as makeSignal,
  type CheckpointStore,
  type Outcome,
  type RunnerDescription,
  type TimelineEntry,
  type RunnerEvent,
  type SessionVersion,
  type ChatMessage,
  type TranscriptEntry,
  type Signal,
  type ApprovalDecision,
} from '@signalyard/core';
import { errorText, isAbortSignal } from '@signalyard/core/internal';
import { agentIdOf, formatSessionKey, parseSessionKey, type InboundRoute, type SessionKey } from '@signalyard/sessions';
import { BatchApplier } from './apply-batch.js';
import { SignalApplier } from './apply-signal.js';
import { decisionsProblem, toolApprovalPayloadProblem } from './approvals.js';
import { aliasesOf, publicTranscript } from './approval-aliases.js';
import { createEventHub } from './event-hub.js';
import { EventTimeline } from './event-timeline.js';
import type { RunnerError } from './errors/runner-error.js';
import { closedError, inputError } from './outcomes.js';
import { PluginHost } from './plugin-host.js';
import { describeRunner } from './runner-description.js';
import { resolveRunnerOptions, type ResolvedRunnerOptions, type RunnerOptions } from './runner-options.js';
import { Semaphore } from './semaphore.js';
import { SessionPersistence, newStrategy } from './session-persistence.js';
import { SessionQueue } from './session-queue.js';
import { SessionTimeline } from './session-timeline.js';
import { turnStream, type TurnSink, type TurnStream } from './turn-stream.js';
import { viewOf, type SessionView } from './session-view.js';

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
   * (e.g. `reject('not a reviewer')` on `payload.by`). Unrouted, the runner's default is
   * `continue` when the session has pending approvals (the engine resumes with the decisions in
   * `ctx.approvals`), else outcome `rejected` with `reject('no_pending_approval')` and nothing
   * runs. Any runner over the same store can approve: the checkpoint is the truth.
   *
   * @throws RunnerError `RUNNER_INPUT_INVALID` (the promise rejects) when `decisions` is not a
   * non-empty list of `{ id, approved, reason? }` with distinct ids, or `by` is not a non-empty
   * string; `RUNNER_CLOSED` after `close()`.
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
  /** Stops accepting signals, lets in-flight turns finish (up to `closeTimeoutMs`), disposes plugins. */
  close(): Promise<void>;
}

/**
 * Creates a {@link Runner}, validating its options.
 *
 * @throws ConfigError `CONFIG_INVALID` listing every problem: duplicate or non-canonical agent
 * ids, a binding or the default agent naming an unknown agent, duplicate plugin names,
 * malformed routes, bad limits.
 * @example
 * ```ts
 * const runner = createRunner({
 *   agents: [{ id: 'main', engine: async (ctx) => ({ messages: [{ role: 'assistant', content: 'hi!' }] }) }],
 * });
 * const outcome = await runner.handle({ channel: 'cli', text: 'hello' });
 * outcome.status;   // 'completed'
 * await runner.close();
 * ```
 */
export function createRunner(options: RunnerOptions): Runner {
  return new RunnerImpl(resolveRunnerOptions(options));
}

/**
 * The facade. Each signal flows: `handle` (resolve the message's agent and session) or
 * `dispatch` → {@link SessionQueue} (one at a time per session, stops routed on arrival) →
 * {@link SignalApplier} (load → route → apply the action, a `continue` running the engine turn in
 * `turn.ts` → save with compare-and-set) → its outcome. {@link PluginHost} runs the plugins;
 * {@link SessionPersistence} owns checkpoints.
 */
class RunnerImpl implements Runner {
  readonly #o: ResolvedRunnerOptions;
  readonly #store: CheckpointStore;
  readonly #ownsStore: boolean;
  readonly #hub = createEventHub();
  readonly #plugins: PluginHost;
  readonly #persistence: SessionPersistence;
  readonly #queue: SessionQueue;
  readonly #timeline: SessionTimeline;
  readonly #recent: EventTimeline | undefined;
  /** Listeners subscribed with `{ explainDecisions: true }`. */
  #explainers = 0;
  /** Records an event in the timeline (absent with `timeline: false`). */
  #record: ((event: RunnerEvent) => void) | undefined;
  /** Unsubscribes the recorder started by an inspecting listener. */
  #stopRecording: (() => void) | undefined;
  #started: Promise<void> | undefined;
  #ready = false;
  #closing: Promise<void> | undefined;

  constructor(options: ResolvedRunnerOptions) {
    this.#o = options;
    this.#ownsStore = options.store === undefined;
    this.#store = options.store ?? new MemoryCheckpointStore();
    if (options.timeline.record !== 'never') {
      const recent = new EventTimeline(options.timeline.bounds);
      this.#recent = recent;
      this.#record = (event) => {
        recent.record(event);
      };
      // Always: the first listener, so an entry is recorded before any other listener sees its event.
      if (options.timeline.record === 'always') this.#hub.on(this.#record);
    }
    const explaining = (): boolean => options.explainDecisions || this.#explainers > 0;
    this.#plugins = new PluginHost(options.plugins, this.#hub, options.logger);
    this.#persistence = new SessionPersistence({
      store: this.#store,
      maxHistoryMessages: options.maxHistoryMessages,
      pluginRoutes: options.pluginRoutes,
    });
    const applierDeps = {
      hub: this.#hub,
      plugins: this.#plugins,
      persistence: this.#persistence,
      maxHistoryMessages: options.maxHistoryMessages,
      explaining,
    };
    const applier = new SignalApplier(applierDeps);
    this.#queue = new SessionQueue({
      hub: this.#hub,
      slots: new Semaphore(options.maxConcurrentSessions),
      persistence: this.#persistence,
      lock: options.lock,
      applier,
      batches: new BatchApplier({ ...applierDeps, applier }),
      whenStarted: () => this.#whenStarted(),
      closing: () => this.#closing !== undefined,
      explaining,
    });
    this.#timeline = new SessionTimeline({
      store: this.#store,
      queue: this.#queue,
      hub: this.#hub,
      agents: options.agents,
    });
  }

  // ------------------------------------------------------------------ lifecycle

  start(): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(closedError());
    this.#started ??= this.#plugins
      .setup((listener) => this.on(listener))
      .then(() => {
        this.#ready = true;
      });
    return this.#started;
  }

  /** `undefined` once started; else the start (begun on demand by the first signal). */
  #whenStarted(): Promise<void> | undefined {
    if (this.#ready) return undefined;
    if (this.#started === undefined) void this.start().catch(() => undefined);
    return this.#started;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    // Queued signals will never run; turns in flight get `closeTimeoutMs` to finish.
    const loops = this.#queue.stopAllQueued();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        resolve('timeout');
      }, this.#o.closeTimeoutMs);
    });
    const finished = await Promise.race([Promise.all(loops).then(() => 'done' as const), timeout]);
    clearTimeout(timer);
    if (finished === 'timeout') {
      this.#queue.abortRunning(new AbortedError({ message: 'The runner closed' }));
      await Promise.all(this.#queue.loops());
    }
    if (this.#started !== undefined) {
      let started = true;
      try {
        await this.#started;
      } catch {
        started = false; // start() already disposed the plugins it had set up
      }
      if (started) await this.#plugins.disposeAll();
    }
    if (this.#ownsStore) await this.#store.close?.();
    this.#hub.end();
  }

  // ------------------------------------------------------------------ events

  on(listener: (event: RunnerEvent) => void, opts?: { explainDecisions?: boolean }): () => void {
    if (typeof listener !== 'function')
      throw inputError(`on() needs a listener function, got ${describeValue(listener)}`);
    const explain = listenerOptions(opts);
    // The first inspecting listener starts the recording (before it subscribes, so it finds its
    // events recorded); the last one leaving stops it, keeping what was recorded.
    if (explain && this.#explainers++ === 0) this.#inspecting(true);
    const off = this.#hub.on(listener);
    if (!explain) return off;
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      off();
      if (--this.#explainers === 0) this.#inspecting(false);
    };
  }

  /** Starts or stops recording the timeline while someone inspects (the default `timeline` option). */
  #inspecting(on: boolean): void {
    if (this.#record === undefined || this.#o.timeline.record !== 'inspecting') return;
    if (on) this.#stopRecording = this.#hub.on(this.#record);
    else {
      this.#stopRecording?.();
      this.#stopRecording = undefined;
    }
  }

  timeline(sessionKey: SessionKey | string, opts: { limit?: number } = {}): TimelineEntry[] {
    const key = canonicalKey(sessionKey).key;
    const limit = timelineLimit(opts);
    return this.#recent?.entries(key, limit) ?? [];
  }

  describe(): RunnerDescription {
    return describeRunner(this.#o.agents, this.#o.pluginRoutes);
  }

  events(opts: { abortSignal?: AbortSignal } = {}): AsyncIterable<RunnerEvent> {
    return this.#hub.events(opts.abortSignal);
  }

  // ------------------------------------------------------------------ entry points

  handle(message: InboundMessage, opts: { abortSignal?: AbortSignal } = {}): Promise<Outcome> {
    return this.#handle(message, opts, undefined);
  }

  stream(message: InboundMessage, opts: { abortSignal?: AbortSignal } = {}): TurnStream {
    return turnStream((sink) => this.#handle(message, opts, sink));
  }

  streamDispatch(
    sessionKey: SessionKey | string,
    signal: Signal,
    opts: { agentId?: string; abortSignal?: AbortSignal } = {},
  ): TurnStream {
    return turnStream((sink) => this.#dispatch(sessionKey, signal, opts, sink));
  }

  approve(
    sessionKey: SessionKey | string,
    decisions: readonly ApprovalDecision[],
    opts: { by?: string; abortSignal?: AbortSignal } = {},
  ): Promise<Outcome> {
    return this.#approve(sessionKey, decisions, opts, undefined);
  }

  streamApprove(
    sessionKey: SessionKey | string,
    decisions: readonly ApprovalDecision[],
    opts: { by?: string; abortSignal?: AbortSignal } = {},
  ): TurnStream {
    return turnStream((sink) => this.#approve(sessionKey, decisions, opts, sink));
  }

  #approve(
    sessionKey: SessionKey | string,
    decisions: readonly ApprovalDecision[],
    opts: { by?: string; abortSignal?: AbortSignal },
    sink: TurnSink | undefined,
  ): Promise<Outcome> {
    if (this.#closing !== undefined) return Promise.reject(closedError());
    const badOptions = optionsProblem('approve', opts, false, true);
    if (badOptions !== undefined) return Promise.reject(badOptions);
    const problem = decisionsProblem(decisions);
    if (problem !== undefined) return Promise.reject(inputError(`approve() got ${problem}`));
    const copies = decisions.map((d): ApprovalDecision =>
      d.reason === undefined
        ? { id: d.id, approved: d.approved }
        : { id: d.id, approved: d.approved, reason: d.reason },
    );
    const payload = opts.by === undefined ? { decisions: copies } : { decisions: copies, by: opts.by };
    const abortSignal = opts.abortSignal === undefined ? {} : { abortSignal: opts.abortSignal };
    return this.#dispatch(sessionKey, makeSignal('tool_approval', payload), abortSignal, sink);
  }

  #handle(message: InboundMessage, opts: { abortSignal?: AbortSignal }, sink: TurnSink | undefined): Promise<Outcome> {
    if (this.#closing !== undefined) return Promise.reject(closedError());
    const badOptions = optionsProblem('handle', opts, false);
    if (badOptions !== undefined) return Promise.reject(badOptions);
    if (typeof message !== 'object' || (message as unknown) === null || typeof message.text !== 'string') {
      return Promise.reject(
        inputError(`handle() needs a message { channel, text, ... }, got ${describeValue(message)}`),
      );
    }
    let resolved;
    try {
      resolved = this.#o.resolver.resolve(message);
    } catch (error) {
      return Promise.reject(inputError(`Cannot route message ${describeValue(message)}: ${errorText(error)}`, error));
    }
    return this.#enqueue(
      formatSessionKey(resolved.sessionKey),
      resolved.agentId,
      makeSignal('user_message', message),
      opts.abortSignal,
      sink,
    );
  }

  dispatch(
    sessionKey: SessionKey | string,
    signal: Signal,
    opts: { agentId?: string; abortSignal?: AbortSignal } = {},
  ): Promise<Outcome> {
    return this.#dispatch(sessionKey, signal, opts, undefined);
  }

  #dispatch(
    sessionKey: SessionKey | string,
    signal: Signal,
    opts: { agentId?: string; abortSignal?: AbortSignal },
    sink: TurnSink | undefined,
  ): Promise<Outcome> {
    if (this.#closing !== undefined) return Promise.reject(closedError());
    const badOptions = optionsProblem('dispatch', opts, true);
    if (badOptions !== undefined) return Promise.reject(badOptions);
    if (
      typeof signal !== 'object' ||
      (signal as unknown) === null ||
      !isSignalKind((signal as { kind?: unknown }).kind)
    ) {
      return Promise.reject(inputError(`dispatch() needs a Signal { kind, payload }, got ${describeValue(signal)}`));
    }
    if (signal.kind === 'tool_approval') {
      const problem = toolApprovalPayloadProblem(signal.payload);
      if (problem !== undefined) return Promise.reject(inputError(`A tool_approval signal has ${problem}`));
    }
    // A canonical key of a live session needs no parsing.
    const live = typeof sessionKey === 'string' ? this.#queue.live(sessionKey) : undefined;
    if (live !== undefined && (opts.agentId === undefined || opts.agentId === live.agent.id)) {
      return this.#queue.enqueue(live.key, live.agent, signal, opts.abortSignal, sink);
    }
    let key: string;
    let agentId: string;
    try {
      const parsed = typeof sessionKey === 'string' ? parseSessionKey(sessionKey) : sessionKey;
      key = formatSessionKey(parsed);
      agentId = opts.agentId ?? agentIdOf(parsed);
    } catch (error) {
      return Promise.reject(inputError(`Invalid session key ${describeValue(sessionKey)}: ${errorText(error)}`, error));
    }
    return this.#enqueue(key, agentId, signal, opts.abortSignal, sink);
  }

  #enqueue(
    key: string,
    agentId: string,
    signal: Signal,
    callerAbort: AbortSignal | undefined,
    sink: TurnSink | undefined,
  ): Promise<Outcome> {
    const agent = this.#o.agents.get(agentId);
    if (agent === undefined) {
      return Promise.reject(
        inputError(
          `Unknown agent ${JSON.stringify(agentId)} for session ${JSON.stringify(key)} (agents: ${JSON.stringify([...this.#o.agents.keys()])})`,
        ),
      );
    }
    return this.#queue.enqueue(key, agent, signal, callerAbort, sink);
  }

  async session(sessionKey: SessionKey | string): Promise<SessionView | undefined> {
    const key = canonicalKey(sessionKey).key;
    const live = this.#queue.live(key);
    const stored = await this.#persistence.read(key);
    const liveness = { busy: live?.busy ?? false, queued: live?.queued ?? 0 };
    if (stored === undefined) {
      if (live === undefined) return undefined;
      const { state } = live;
      const strategy = state.kind === 'loaded' ? state.strategy : newStrategy(live.agent);
      return {
        sessionKey: key,
        agentId: live.agent.id,
        version: 0,
        strategy: strategy.snapshot(),
        history: [],
        engineState: undefined,
        pendingApprovals: [],
        ...liveness,
      };
    }
    return viewOf(key, stored.version, stored.data, liveness);
  }

  async transcript(sessionKey: SessionKey | string): Promise<TranscriptEntry[]> {
    const key = canonicalKey(sessionKey).key;
    const stored = await this.#persistence.read(key);
    if (stored === undefined) return [];
    const { data } = stored;
    const agent = this.#o.agents.get(data.agentId);
    const own = agent?.definition.engine;
    if (typeof own === 'object' && typeof own.transcript === 'function')
      return publicTranscript(own.transcript(data.history, data.engine), aliasesOf(data));
    return defaultTranscript(data.history, data.agentId);
  }

  // ------------------------------------------------------------------ history and time travel

  history(sessionKey: SessionKey | string, opts?: { before?: number; limit?: number }): AsyncIterable<SessionVersion> {
    const key = canonicalKey(sessionKey).key; // before iterating: a bad key throws here
    return this.#timeline.history(key, opts);
  }

  async sessionAt(sessionKey: SessionKey | string, version: number): Promise<SessionView | undefined> {
    return this.#timeline.sessionAt(canonicalKey(sessionKey).key, version);
  }

  async fork(
    from: SessionKey | string,
    to: SessionKey | string,
    opts: { version?: number; reissueApprovals?: boolean } = {},
  ): Promise<SessionView> {
    if (this.#closing !== undefined) throw closedError();
    const o = reopenOptions('fork', opts, true);
    return this.#timeline.fork(canonicalKey(from).key, canonicalKey(to), o.version, o);
  }

  async rewind(
    sessionKey: SessionKey | string,
    version: number,
    opts: { reissueApprovals?: boolean } = {},
  ): Promise<SessionView> {
    if (this.#closing !== undefined) throw closedError();
    return this.#timeline.rewind(canonicalKey(sessionKey).key, version, reopenOptions('rewind', opts, false));
  }

  async deleteSession(sessionKey: SessionKey | string): Promise<void> {
    if (this.#closing !== undefined) throw closedError();
    const { key, agentId } = canonicalKey(sessionKey);
    this.#recent?.forget(key);
    const agent = this.#queue.live(key)?.agent ?? this.#o.agents.get(agentId);
    if (agent === undefined) {
      await this.#store.delete(key); // no agent of this runner: nothing can be queued on it
      return;
    }
    await this.#timeline.deleteSession(key, agent);
  }

  listSessions(
    opts: { prefix?: string; after?: string; limit?: number } = {},
  ): AsyncIterable<{ sessionKey: string; agentId: string; version: number; updatedAt: string }> {
    return this.#timeline.listSessions(listOptions(opts));
  }
}

/** The user and assistant messages of a history, as they are (an assistant message's `name` as its agent, else the session's). */
function defaultTranscript(history: readonly ChatMessage[], agentId: string): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  for (const m of history) {
    if (m.role === 'user') entries.push({ type: 'user', text: m.content });
    else if (m.role === 'assistant' && m.content !== '')
      entries.push({ type: 'assistant', agentId: m.name ?? agentId, text: m.content });
  }
  return entries;
}

/** The canonical form of a session key and the agent it names. @throws RunnerError `RUNNER_INPUT_INVALID`. */
function canonicalKey(sessionKey: SessionKey | string): { key: string; agentId: string } {
  try {
    const parsed = typeof sessionKey === 'string' ? parseSessionKey(sessionKey) : sessionKey;
    return { key: formatSessionKey(parsed), agentId: agentIdOf(parsed) };
  } catch (error) {
    throw inputError(`Invalid session key ${describeValue(sessionKey)}: ${errorText(error)}`, error);
  }
}

function reopenOptions(
  method: string,
  opts: unknown,
  withVersion: boolean,
): { version: number | undefined; reissueApprovals: boolean } {
  if (typeof opts !== 'object' || opts === null) {
    throw inputError(`${method}() options must be an object, got ${describeValue(opts)}`);
  }
  const o = opts as { version?: unknown; reissueApprovals?: unknown };
  if (o.reissueApprovals !== undefined && typeof o.reissueApprovals !== 'boolean') {
    throw inputError(
      `${method}() options.reissueApprovals must be a boolean, got ${describeValue(o.reissueApprovals)}`,
    );
  }
  return {
    version: withVersion ? (o.version as number | undefined) : undefined,
    reissueApprovals: o.reissueApprovals === true,
  };
}

/** `on()`'s options: whether the listener asks for explained decisions. */
function listenerOptions(opts: unknown): boolean {
  if (opts === undefined) return false;
  const bad = (): RunnerError =>
    inputError(`on() options must be { explainDecisions?: boolean }, got ${describeValue(opts)}`);
  if (typeof opts !== 'object' || opts === null) throw bad();
  const { explainDecisions } = opts as { explainDecisions?: unknown };
  if (explainDecisions !== undefined && typeof explainDecisions !== 'boolean') throw bad();
  return explainDecisions === true;
}

/** `timeline()`'s `limit`: an integer >= 1, default every entry kept. */
function timelineLimit(opts: unknown): number {
  if (typeof opts !== 'object' || opts === null)
    throw inputError(`timeline() options must be { limit? }, got ${describeValue(opts)}`);
  const { limit } = opts as { limit?: unknown };
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1)
    throw inputError(`timeline() options.limit must be an integer >= 1, got ${describeValue(limit)}`);
  return limit;
}

function listOptions(opts: unknown): { prefix?: string; after?: string; limit?: number } {
  if (typeof opts !== 'object' || opts === null) {
    throw inputError(`listSessions() options must be { prefix?, after?, limit? }, got ${describeValue(opts)}`);
  }
  const o = opts as { prefix?: unknown; after?: unknown; limit?: unknown };
  for (const name of ['prefix', 'after'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'string')
      throw inputError(`listSessions() options.${name} must be a string, got ${describeValue(o[name])}`);
  }
  if (o.limit !== undefined && (typeof o.limit !== 'number' || !Number.isSafeInteger(o.limit) || o.limit < 1))
    throw inputError(`listSessions() options.limit must be an integer >= 1, got ${describeValue(o.limit)}`);
  return o as { prefix?: string; after?: string; limit?: number };
}

/** Why the options of `handle` / `dispatch` / `approve` are malformed, as a `RUNNER_INPUT_INVALID` error. */
function optionsProblem(method: string, opts: unknown, agentId: boolean, by = false): RunnerError | undefined {
  if (opts === undefined) return undefined;
  const expected = agentId
    ? '{ agentId?: string, abortSignal?: AbortSignal }'
    : by
      ? '{ by?: string, abortSignal?: AbortSignal }'
      : '{ abortSignal?: AbortSignal }';
  if (typeof opts !== 'object' || opts === null) {
    return inputError(`${method}() options must be ${expected}, got ${describeValue(opts)}`);
  }
  const o = opts as { abortSignal?: unknown; agentId?: unknown; by?: unknown };
  if (by && o.by !== undefined && (typeof o.by !== 'string' || o.by === '')) {
    return inputError(`${method}() options.by must be a non-empty string (who decided), got ${describeValue(o.by)}`);
  }
  if (o.abortSignal !== undefined && !isAbortSignal(o.abortSignal)) {
    return inputError(`${method}() options.abortSignal must be an AbortSignal, got ${describeValue(o.abortSignal)}`);
  }
  if (agentId && o.agentId !== undefined && (typeof o.agentId !== 'string' || o.agentId === '')) {
    return inputError(`${method}() options.agentId must be a non-empty agent id, got ${describeValue(o.agentId)}`);
  }
  return undefined;
}

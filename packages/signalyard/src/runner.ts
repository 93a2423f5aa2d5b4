import {
  MemoryCheckpointStore,
  describeValue,
  signal as makeSignal,
  type ApprovalDecision,
  type AcceptOptions,
  type CheckpointStore,
  type Inbox,
  type InboxReceipt,
  type JsonValue,
  type Outcome,
  type RunnerDescription,
  type RunnerEvent,
  type SessionVersion,
  type Signal,
  type SignalJson,
  type TimelineEntry,
  type TranscriptEntry,
} from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import { agentIdOf, formatSessionKey, parseSessionKey, type SessionKey } from '@signalyard/sessions';
import { BatchApplier } from './apply-batch.js';
import { SignalApplier } from './apply-signal.js';
import { createEventHub } from './event-hub.js';
import { closedError, inputError } from './outcomes.js';
import { PluginHost } from './plugin-host.js';
import type { InboundMessage, Runner } from './runner-api.js';
import { drainOnClose } from './runner-close.js';
import { describeRunner } from './runner-description.js';
import { approvalProblem, approvalSignal, dispatchedSignalProblem, messageProblem } from './runner-entry-checks.js';
import { OPTIONS, canonicalKey, checkedOptions, optionsProblem } from './runner-input.js';
import { RunnerListeners } from './runner-listeners.js';
import { resolveRunnerOptions, type ResolvedRunnerOptions, type RunnerOptions } from './runner-options.js';
import { readSessionView, readTranscript } from './runner-views.js';
import { Semaphore } from './semaphore.js';
import { SessionPersistence } from './session-persistence.js';
import { SessionQueue } from './session-queue.js';
import { RunnerInbox, noInboxError, resolveMessage, signalJsonOf, unknownAgent } from './runner-inbox.js';
import { SessionTimeline } from './session-timeline.js';
import { turnStream, type TurnSink, type TurnStream } from './turn-stream.js';
import type { SessionView } from './session-view.js';

/** No options (shared: a call without them makes no object). */
const NO_OPTIONS: { readonly agentId?: string; readonly abortSignal?: AbortSignal } = Object.freeze({});

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
  readonly #listeners: RunnerListeners;
  /** The durable inbox's producer and worker (absent: the in-process queue alone). */
  readonly #inbox: RunnerInbox | undefined;
  #started: Promise<void> | undefined;
  #ready = false;
  #closing: Promise<void> | undefined;

  constructor(options: ResolvedRunnerOptions) {
    this.#o = options;
    this.#ownsStore = options.store === undefined;
    this.#store = options.store ?? new MemoryCheckpointStore({ clock: options.clock });
    this.#listeners = new RunnerListeners(this.#hub, options);
    const { explaining } = this.#listeners;
    this.#plugins = new PluginHost(options.plugins, this.#hub, options.logger, options.clock);
    this.#persistence = new SessionPersistence({
      store: this.#store,
      maxHistoryMessages: options.maxHistoryMessages,
      pluginRoutes: options.pluginRoutes,
      clock: options.clock,
      maxCausePayloadBytes: options.maxCausePayloadBytes,
      redact: options.redact,
      maxOutcomeBytes: options.maxOutcomeBytes,
    });
    const applierDeps = {
      hub: this.#hub,
      plugins: this.#plugins,
      persistence: this.#persistence,
      maxHistoryMessages: options.maxHistoryMessages,
      explaining,
    };
    const applier = new SignalApplier(applierDeps);
    const inbox = options.inbox;
    this.#inbox = inbox && new RunnerInbox({ inbox, options, persistence: this.#persistence });
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
      ...(this.#inbox !== undefined && { inbox: this.#inbox.hooks }),
    });
    this.#timeline = new SessionTimeline({
      store: this.#store,
      queue: this.#queue,
      hub: this.#hub,
      agents: options.agents,
      clock: options.clock,
    });
    this.#inbox?.startWorker(this.#queue, this.#timeline, (job, outcome) => {
      this.#queue.settle(job, outcome);
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
    await drainOnClose(this.#queue, this.#inbox, this.#o.closeTimeoutMs);
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
    return this.#listeners.on(listener, opts);
  }

  timeline(sessionKey: SessionKey | string, opts: { limit?: number } = {}): TimelineEntry[] {
    const key = canonicalKey(sessionKey).key;
    const limit = checkedOptions(OPTIONS.timeline, opts).limit ?? Number.POSITIVE_INFINITY;
    return this.#listeners.recent?.entries(key, limit) ?? [];
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
    const problem = approvalProblem(decisions, opts);
    if (problem !== undefined) return Promise.reject(problem);
    const abortSignal = opts.abortSignal === undefined ? {} : { abortSignal: opts.abortSignal };
    return this.#dispatch(sessionKey, approvalSignal(decisions, opts.by), abortSignal, sink);
  }

  #handle(message: InboundMessage, opts: { abortSignal?: AbortSignal }, sink: TurnSink | undefined): Promise<Outcome> {
    if (this.#closing !== undefined) return Promise.reject(closedError());
    const badOptions = optionsProblem(OPTIONS.handle, opts);
    if (badOptions !== undefined) return Promise.reject(badOptions);
    const badMessage = messageProblem(message);
    if (badMessage !== undefined) return Promise.reject(badMessage);
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
    opts: { agentId?: string; abortSignal?: AbortSignal } = NO_OPTIONS,
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
    const badOptions = optionsProblem(OPTIONS.dispatch, opts);
    if (badOptions !== undefined) return Promise.reject(badOptions);
    const badSignal = dispatchedSignalProblem(signal);
    if (badSignal !== undefined) return Promise.reject(badSignal);
    // A canonical key of a live session needs no parsing.
    const live = typeof sessionKey === 'string' && this.#inbox === undefined ? this.#queue.live(sessionKey) : undefined;
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
      return Promise.reject(unknownAgent(agentId, key, this.#o.agents));
    }
    if (this.#inbox === undefined) return this.#queue.enqueue(key, agent, signal, callerAbort, sink);
    return this.#inbox.dispatch(key, agentId, signal, callerAbort, sink);
  }

  // ------------------------------------------------------------------ the inbox

  async accept(sessionKey: SessionKey | string, signal: Signal, opts: AcceptOptions = {}): Promise<InboxReceipt> {
    if (this.#closing !== undefined) throw closedError();
    const o = checkedOptions(OPTIONS.accept, opts);
    const { key, agentId } = canonicalKey(sessionKey);
    return this.#accept(key, o.agentId ?? agentId, signalJsonOf('accept', signal), o.id);
  }

  async acceptMessage(message: InboundMessage, opts: { id?: string } = {}): Promise<InboxReceipt> {
    if (this.#closing !== undefined) throw closedError();
    const o = checkedOptions(OPTIONS.acceptMessage, opts);
    const { key, agentId, signal } = resolveMessage(this.#o.resolver, message);
    return this.#accept(key, agentId, signal, o.id);
  }

  #accept(key: string, agentId: string, signal: SignalJson, id: string | undefined): Promise<InboxReceipt> {
    if (this.#inbox === undefined) throw noInboxError('accept');
    if (!this.#o.agents.has(agentId)) throw unknownAgent(agentId, key, this.#o.agents);
    return this.#inbox.accept(key, agentId, signal, id);
  }

  async outcome(receiptId: string, opts: { abortSignal?: AbortSignal; timeoutMs?: number } = {}): Promise<Outcome> {
    if (this.#closing !== undefined) throw closedError();
    const o = checkedOptions(OPTIONS.outcome, opts);
    if (typeof receiptId !== 'string' || receiptId === '')
      throw inputError(`outcome() needs a receipt id (a non-empty string), got ${describeValue(receiptId)}`);
    if (this.#inbox === undefined) throw noInboxError('outcome');
    return this.#inbox.producer.outcome(receiptId, o);
  }

  resumeStream(
    ref: { receiptId: string } | { sessionKey: string },
    opts: { from?: string; abortSignal?: AbortSignal } = {},
  ): TurnStream {
    return RunnerInbox.resumeStream(this.#closing !== undefined ? undefined : (this.#inbox ?? null), ref, opts);
  }

  get inbox(): Inbox | undefined {
    return this.#inbox?.inbox;
  }

  deadLetters(opts: { limit?: number } = {}): AsyncIterable<{ receipt: InboxReceipt; outcome: Outcome }> {
    const { limit } = checkedOptions(OPTIONS.deadLetters, opts);
    if (this.#inbox === undefined) throw noInboxError('deadLetters');
    return this.#inbox.deadLetters(limit);
  }

  async session(sessionKey: SessionKey | string): Promise<SessionView | undefined> {
    return readSessionView(canonicalKey(sessionKey).key, this.#queue, this.#persistence);
  }

  async transcript(sessionKey: SessionKey | string): Promise<TranscriptEntry[]> {
    return readTranscript(canonicalKey(sessionKey).key, this.#persistence, this.#o.agents);
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
    const o = checkedOptions(OPTIONS.fork, opts);
    const reopen = { reissueApprovals: o.reissueApprovals === true };
    return this.#timeline.fork(canonicalKey(from).key, canonicalKey(to), o.version, reopen);
  }

  async rewind(
    sessionKey: SessionKey | string,
    version: number,
    opts: { reissueApprovals?: boolean } = {},
  ): Promise<SessionView> {
    if (this.#closing !== undefined) throw closedError();
    const reopen = { reissueApprovals: checkedOptions(OPTIONS.rewind, opts).reissueApprovals === true };
    const { key, agentId } = canonicalKey(sessionKey);
    if (this.#inbox === undefined) return this.#timeline.rewind(key, version, reopen);
    const args = { version: version as unknown as JsonValue, reissueApprovals: reopen.reissueApprovals };
    return (await this.#inbox.control(key, agentId, 'rewind', args)) as SessionView;
  }

  async deleteSession(sessionKey: SessionKey | string): Promise<void> {
    if (this.#closing !== undefined) throw closedError();
    const { key, agentId } = canonicalKey(sessionKey);
    this.#listeners.recent?.forget(key);
    if (this.#inbox !== undefined) {
      await this.#inbox.control(key, agentId, 'delete', {});
      return;
    }
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
    return this.#timeline.listSessions(checkedOptions(OPTIONS.listSessions, opts));
  }
}

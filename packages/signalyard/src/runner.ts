import {
  AbortedError,
  Action,
  CheckpointConflictError,
  ConfigError,
  DirectStrategy,
  MemoryCheckpointStore,
  SignalyardError,
  describeValue,
  isAction,
  isSignalKind,
  isSignalyardError,
  signal as makeSignal,
  type ChatMessage,
  type CheckpointStore,
  type CustomActionHandler,
  type ExecutionStrategy,
  type Outcome,
  type Plugin,
  type PluginContext,
  type SessionCheckpointV1,
  type RunnerEvent,
  type Signal,
  type StrategySnapshot,
  type TransitionResult,
} from '@signalyard/core';
import { ComposedRouter, type RouteMatch } from '@signalyard/router';
import { agentIdOf, formatSessionKey, parseSessionKey, type InboundRoute, type SessionKey } from '@signalyard/sessions';
import { decodeCheckpoint } from './checkpoint-format.js';
import type { TurnContext, TurnResult } from './engine.js';
import { RunnerError, type RunnerErrorCode } from './errors/runner-error.js';
import { EventHub } from './event-hub.js';
import { trimHistory, userMessageOf } from './history.js';
import { LiveSession, type Job } from './live-session.js';
import {
  resolveRunnerOptions,
  type AgentRuntime,
  type ResolvedRunnerOptions,
  type RunnerOptions,
} from './runner-options.js';
import { Semaphore } from './semaphore.js';
import { Stopper, raceStop } from './stopper.js';

/** An inbound message: where it came from (`InboundRoute` of `@signalyard/sessions`) and its text. */
export interface InboundMessage extends InboundRoute {
  text: string;
}

/** A session as the runner sees it: its checkpoint and its live queue. */
export interface SessionView {
  sessionKey: string;
  agentId: string;
  /** The checkpoint version (0 = never saved). */
  version: number;
  strategy: StrategySnapshot;
  history: readonly ChatMessage[];
  engineState: unknown;
  /** A turn is in flight. */
  busy: boolean;
  /** Signals waiting behind it. */
  queued: number;
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
  /** The session's checkpoint and live state; `undefined` for a session never seen. */
  session(sessionKey: SessionKey | string): Promise<SessionView | undefined>;
  /** Subscribes to every runner event (synchronous, in order). Returns an unsubscribe function. */
  on(listener: (event: RunnerEvent) => void): () => void;
  /** A buffered async iterable of runner events; ends on `abortSignal` or when the runner closes. */
  events(opts?: { abortSignal?: AbortSignal }): AsyncIterable<RunnerEvent>;
  /** Stops accepting signals, lets in-flight turns finish (up to `closeTimeoutMs`), disposes plugins. */
  close(): Promise<void>;
}

/** Result of applying one signal, before its checkpoint is saved. */
interface Applied {
  readonly outcome: Outcome;
  /** What to save; undefined: nothing to save. */
  readonly save?: { readonly history: readonly ChatMessage[]; readonly engineState: unknown };
  /** Strategy state to return to when the save fails. */
  readonly rollback?: StrategySnapshot;
  /** Stop the queued signals once saved (a stop action applied at its turn). */
  readonly stopQueued?: boolean;
  /** Events to emit once saved. */
  readonly transitions?: readonly TransitionResult[];
}

const MAX_CONFLICT_RETRIES = 3;
const MAX_IDLE_SESSIONS = 10_000;

const REFUSED_TRANSITION = new Set(['FSM_INVALID_TRANSITION', 'FSM_GUARD_REJECTED']);

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

class RunnerImpl implements Runner {
  readonly #o: ResolvedRunnerOptions;
  readonly #store: CheckpointStore;
  readonly #ownsStore: boolean;
  readonly #hub = new EventHub();
  readonly #sessions = new Map<string, LiveSession>();
  readonly #slots: Semaphore;
  readonly #customActions = new Map<string, CustomActionHandler>();
  #started: Promise<void> | undefined;
  #ready = false;
  #closing: Promise<void> | undefined;

  constructor(options: ResolvedRunnerOptions) {
    this.#o = options;
    this.#ownsStore = options.store === undefined;
    this.#store = options.store ?? new MemoryCheckpointStore();
    this.#slots = new Semaphore(options.maxConcurrentSessions);
  }

  // ------------------------------------------------------------------ lifecycle

  start(): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(closedError());
    this.#started ??= this.#setup().then(
      () => {
        this.#ready = true;
      },
      (error: unknown) => {
        throw error;
      },
    );
    return this.#started;
  }

  async #setup(): Promise<void> {
    const claims = new Map<string, string[]>();
    const done: Plugin[] = [];
    try {
      for (const plugin of this.#o.plugins) {
        const ctx: PluginContext = {
          on: (listener) => this.on(listener),
          handleCustomAction: (name, handler) => {
            if (typeof name !== 'string' || name === '' || typeof handler !== 'function') {
              throw new RunnerError({
                code: 'RUNNER_INPUT_INVALID',
                message: `Plugin "${plugin.name}" registered custom action ${describeValue(name)} with ${describeValue(handler)}: expected a non-empty name and a handler function`,
              });
            }
            claims.set(name, [...(claims.get(name) ?? []), plugin.name]);
            if (!this.#customActions.has(name)) this.#customActions.set(name, handler);
          },
          ...(this.#o.logger === undefined ? {} : { logger: this.#o.logger }),
        };
        await plugin.setup?.(ctx);
        done.push(plugin);
      }
      const clashes = [...claims].filter(([, owners]) => owners.length > 1);
      if (clashes.length > 0) {
        throw new ConfigError({
          problems: clashes.map(([name, owners]) => ({
            path: `plugins.customActions.${name}`,
            message: `custom action ${JSON.stringify(name)} is claimed by several plugins: ${owners.map((o) => JSON.stringify(o)).join(', ')}`,
          })),
        });
      }
    } catch (error) {
      for (const plugin of done.reverse()) await this.#dispose(plugin);
      this.#customActions.clear();
      throw error;
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    // Queued signals will never run.
    for (const session of this.#sessions.values()) {
      for (const job of session.drain()) this.#settle(job, this.#stoppedOutcome(session));
    }
    const loops = (): Promise<void>[] =>
      [...this.#sessions.values()].flatMap((s) => (s.loop === undefined ? [] : [s.loop]));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<'timeout'>(
      (resolve) =>
        (timer = setTimeout(() => {
          resolve('timeout');
        }, this.#o.closeTimeoutMs)),
    );
    const finished = await Promise.race([Promise.all(loops()).then(() => 'done' as const), timeout]);
    clearTimeout(timer);
    if (finished === 'timeout') {
      for (const session of this.#sessions.values())
        session.running?.stop.abort(new AbortedError({ message: 'The runner closed' }));
      await Promise.all(loops());
    }
    if (this.#started !== undefined) {
      let started = true;
      try {
        await this.#started;
      } catch {
        started = false; // start() already disposed the plugins it had set up
      }
      if (started) for (const plugin of [...this.#o.plugins].reverse()) await this.#dispose(plugin);
    }
    if (this.#ownsStore) await this.#store.close?.();
    this.#hub.end();
  }

  async #dispose(plugin: Plugin): Promise<void> {
    try {
      await plugin.dispose?.();
    } catch (error) {
      this.#hub.emit({
        type: 'warning',
        message: `Plugin "${plugin.name}" dispose() threw: ${errorText(error)}`,
        cause: error,
      });
    }
  }

  // ------------------------------------------------------------------ events

  on(listener: (event: RunnerEvent) => void): () => void {
    if (typeof listener !== 'function')
      throw inputError(`on() needs a listener function, got ${describeValue(listener)}`);
    return this.#hub.on(listener);
  }

  events(opts: { abortSignal?: AbortSignal } = {}): AsyncIterable<RunnerEvent> {
    return this.#hub.events(opts.abortSignal);
  }

  // ------------------------------------------------------------------ entry points

  handle(message: InboundMessage, opts: { abortSignal?: AbortSignal } = {}): Promise<Outcome> {
    if (this.#closing !== undefined) return Promise.reject(closedError());
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
    );
  }

  dispatch(
    sessionKey: SessionKey | string,
    signal: Signal,
    opts: { agentId?: string; abortSignal?: AbortSignal } = {},
  ): Promise<Outcome> {
    if (this.#closing !== undefined) return Promise.reject(closedError());
    if (
      typeof signal !== 'object' ||
      (signal as unknown) === null ||
      !isSignalKind((signal as { kind?: unknown }).kind)
    ) {
      return Promise.reject(inputError(`dispatch() needs a Signal { kind, payload }, got ${describeValue(signal)}`));
    }
    // A canonical key of a live session needs no parsing.
    const live = typeof sessionKey === 'string' ? this.#sessions.get(sessionKey) : undefined;
    if (live !== undefined && (opts.agentId === undefined || opts.agentId === live.agent.id)) {
      return this.#enqueue(live.key, live.agent.id, signal, opts.abortSignal);
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
    return this.#enqueue(key, agentId, signal, opts.abortSignal);
  }

  async session(sessionKey: SessionKey | string): Promise<SessionView | undefined> {
    let key: string;
    try {
      key = formatSessionKey(typeof sessionKey === 'string' ? parseSessionKey(sessionKey) : sessionKey);
    } catch (error) {
      throw inputError(`Invalid session key ${describeValue(sessionKey)}: ${errorText(error)}`, error);
    }
    const live = this.#sessions.get(key);
    const checkpoint = await this.#store.load(key);
    if (checkpoint === undefined) {
      if (live === undefined) return undefined;
      return {
        sessionKey: key,
        agentId: live.agent.id,
        version: 0,
        strategy: live.strategy?.snapshot() ?? this.#newStrategy(live.agent).snapshot(),
        history: [],
        engineState: undefined,
        busy: live.busy,
        queued: live.queued,
      };
    }
    const data = decodeCheckpoint(key, checkpoint.data);
    return {
      sessionKey: key,
      agentId: data.agentId,
      version: checkpoint.version,
      strategy: data.strategy,
      history: data.history,
      engineState: data.engine,
      busy: live?.busy ?? false,
      queued: live?.queued ?? 0,
    };
  }

  // ------------------------------------------------------------------ queueing

  /** Enqueues synchronously (before any await), so per-session order is call order. */
  #enqueue(key: string, agentId: string, signal: Signal, callerAbort: AbortSignal | undefined): Promise<Outcome> {
    const agent = this.#o.agents.get(agentId);
    if (agent === undefined) {
      return Promise.reject(
        inputError(
          `Unknown agent ${JSON.stringify(agentId)} for session ${JSON.stringify(key)} (agents: ${JSON.stringify([...this.#o.agents.keys()])})`,
        ),
      );
    }
    let session = this.#sessions.get(key);
    if (session === undefined) {
      session = new LiveSession(key, agent);
      this.#sessions.set(key, session);
      this.#evictIdle();
    }
    let resolve!: (outcome: Outcome) => void;
    const promise = new Promise<Outcome>((r) => (resolve = r));
    const job: Job = { signal, resolve, settled: false, stop: new Stopper(), detach: undefined, announced: false };
    if (session.agent !== agent) {
      this.#settle(
        job,
        this.#failedOutcome(
          key,
          agentId,
          new RunnerError({
            code: 'SESSION_AGENT_MISMATCH',
            message: `Session ${JSON.stringify(key)} belongs to agent ${JSON.stringify(session.agent.id)}, not ${JSON.stringify(agentId)}`,
          }),
          undefined,
          undefined,
        ),
      );
      return promise;
    }
    if (callerAbort !== undefined) {
      if (callerAbort.aborted) {
        this.#settle(job, this.#stoppedOutcome(session));
        return promise;
      }
      const s = session;
      const onAbort = (): void => {
        if (s.running === job) job.stop.abort(callerAbort.reason);
        else this.#settle(job, this.#stoppedOutcome(s));
      };
      callerAbort.addEventListener('abort', onAbort, { once: true });
      job.detach = () => {
        callerAbort.removeEventListener('abort', onAbort);
      };
    }
    // A stop is routed on arrival, never waiting in the queue. It can only stop the work that
    // existed when it arrived: the turn in flight and the signals waiting then.
    if (signal.kind === 'stop') {
      const victims = session.waiting();
      const inFlight = session.running;
      if (session.router !== undefined) this.#stopOnArrival(session, job, victims, inFlight);
      else void this.#loadThenStop(session, job, victims, inFlight);
      return promise;
    }
    session.push(job);
    session.loop ??= this.#process(session);
    return promise;
  }

  async #process(session: LiveSession): Promise<void> {
    try {
      if (this.#started === undefined) void this.start().catch(() => undefined);
      try {
        if (!this.#ready) await this.#started;
      } catch (error) {
        for (let job = session.next(); job !== undefined; job = session.next()) {
          this.#settle(
            job,
            this.#failedOutcome(session.key, session.agent.id, startFailed(error), undefined, undefined),
          );
        }
        return;
      }
      // Wait for a slot before taking the next signal off the queue, so that a stop (or close)
      // arriving meanwhile still finds it queued.
      while (session.hasNext()) {
        const wait = this.#slots.acquire();
        if (wait !== undefined) await wait;
        try {
          const job = session.next();
          if (job === undefined) break;
          if (this.#closing !== undefined) this.#settle(job, this.#stoppedOutcome(session));
          else await this.#run(session, job);
        } finally {
          this.#slots.release();
        }
      }
    } finally {
      session.loop = undefined;
    }
  }

  async #run(session: LiveSession, job: Job): Promise<void> {
    session.running = job;
    let outcome: Outcome;
    try {
      const lock = this.#o.lock;
      outcome =
        lock === undefined
          ? await this.#apply(session, job, false)
          : await lock.withLock(session.key, () => this.#apply(session, job, true), { abortSignal: job.stop.signal });
    } catch (error) {
      outcome = job.stop.aborted
        ? this.#stoppedOutcome(session)
        : this.#failedOutcome(
            session.key,
            session.agent.id,
            asSignalyardError(error, 'SESSION_LOCK_FAILED'),
            undefined,
            undefined,
          );
    } finally {
      session.running = undefined;
    }
    this.#settle(job, outcome);
  }

  /** A stop for a session not loaded yet: load it (sharing the worker's load), then route the stop. */
  async #loadThenStop(
    session: LiveSession,
    job: Job,
    victims: readonly Job[],
    inFlight: Job | undefined,
  ): Promise<void> {
    try {
      await this.#loadShared(session);
    } catch (error) {
      this.#settle(
        job,
        this.#failedOutcome(
          session.key,
          session.agent.id,
          asSignalyardError(error, 'CHECKPOINT_LOAD_FAILED'),
          undefined,
          undefined,
        ),
      );
      return;
    }
    if (!job.settled) this.#stopOnArrival(session, job, victims, inFlight);
  }

  /** Loads the session unless loaded, joining a load already in flight. */
  async #loadShared(session: LiveSession, force = false): Promise<void> {
    while (session.loading !== undefined) {
      try {
        await session.loading;
      } catch {
        // the other load's caller reports it; try again below
      }
    }
    if (session.loaded && !force) return;
    const loading = this.#load(session, true);
    session.loading = loading;
    try {
      await loading;
    } finally {
      session.loading = undefined;
    }
  }

  /** A stop signal is routed on arrival, without waiting behind the turn in flight. */
  #stopOnArrival(session: LiveSession, job: Job, victims: readonly Job[], inFlight: Job | undefined): void {
    job.announced = true;
    this.#hub.emit({ type: 'signal_received', sessionKey: session.key, agentId: session.agent.id, signal: job.signal });
    let match: RouteMatch | undefined;
    try {
      match = (session.router as ComposedRouter).match(job.signal, session.ctx);
    } catch (error) {
      this.#hub.emit({
        type: 'route_decided',
        sessionKey: session.key,
        agentId: session.agent.id,
        signal: job.signal,
        action: undefined,
      });
      this.#settle(job, this.#failedOutcome(session.key, session.agent.id, error, undefined, undefined));
      return;
    }
    const action = match?.action ?? Action.GracefulStop;
    this.#emitDecision(session, job.signal, action, match);
    if (action.type !== 'force_stop' && action.type !== 'graceful_stop') {
      session.push(job); // any other action is applied in order, like any signal
      session.loop ??= this.#process(session);
      return;
    }
    const force = action.type === 'force_stop';
    for (const victim of [inFlight, ...victims]) {
      if (victim === undefined || victim.settled) continue;
      // A victim that has started since the stop arrived is the turn in flight now.
      if (session.running === victim) {
        if (force) victim.stop.abort(new AbortedError({ message: 'force_stop' }));
      } else {
        this.#settle(victim, this.#stoppedOutcome(session));
      }
    }
    this.#settle(job, this.#outcome(session, action, match, 'completed'));
  }

  #stopQueued(session: LiveSession): void {
    for (const queued of session.drain()) this.#settle(queued, this.#stoppedOutcome(session));
  }

  #settle(job: Job, outcome: Outcome): void {
    if (job.settled) return;
    job.settled = true;
    job.detach?.();
    if (this.#hub.hasListeners) {
      // The event's shape is the contract's { type, outcome }; the signal rides along
      // non-enumerably for plugins that need it (the audit log, tracing).
      const event = { type: 'outcome' as const, outcome };
      Object.defineProperty(event, 'signal', { value: job.signal, enumerable: false });
      this.#hub.emit(event);
    }
    job.resolve(outcome);
  }

  #evictIdle(): void {
    if (this.#sessions.size <= MAX_IDLE_SESSIONS) return;
    for (const [key, s] of this.#sessions) {
      if (this.#sessions.size <= MAX_IDLE_SESSIONS * 0.9) break;
      if (s.idle) this.#sessions.delete(key);
    }
  }

  // ------------------------------------------------------------------ applying a signal

  /** Load → route → apply → save, re-applied after a compare-and-set conflict (at most 3 times). */
  async #apply(session: LiveSession, job: Job, reload: boolean): Promise<Outcome> {
    for (let attempt = 0; ; attempt++) {
      if (!job.announced) {
        job.announced = true;
        if (this.#hub.hasListeners)
          this.#hub.emit({
            type: 'signal_received',
            sessionKey: session.key,
            agentId: session.agent.id,
            signal: job.signal,
          });
      }
      try {
        if (reload || attempt > 0 || !session.loaded || session.loading !== undefined)
          await this.#loadShared(session, reload || attempt > 0);
      } catch (error) {
        return this.#failedOutcome(
          session.key,
          session.agent.id,
          asSignalyardError(error, 'CHECKPOINT_LOAD_FAILED'),
          undefined,
          undefined,
        );
      }
      const applied = await this.#applyOnce(session, job);
      if (applied.save === undefined) return applied.outcome;
      const strategy = session.strategy as ExecutionStrategy;
      const checkpoint: SessionCheckpointV1 = {
        v: 1,
        agentId: session.agent.id,
        strategy: strategy.snapshot(),
        history: applied.save.history,
        engine: applied.save.engineState,
      };
      try {
        session.version = await this.#store.save(session.key, checkpoint, session.version);
        session.history = applied.save.history;
        session.engineState = applied.save.engineState;
      } catch (error) {
        if (applied.rollback !== undefined) strategy.restore(applied.rollback);
        session.loaded = false;
        if (CheckpointConflictError.isInstance(error) && attempt < MAX_CONFLICT_RETRIES) continue;
        if (isSignalyardError(error, 'CHECKPOINT_DATA_INVALID') && applied.outcome.status !== 'failed') {
          // The turn's effects cannot be stored; what arrived still is.
          return this.#saveArrivalOnly(session, job, error, applied.outcome);
        }
        return { ...applied.outcome, status: 'failed', error: asSignalyardError(error, 'CHECKPOINT_SAVE_FAILED') };
      }
      for (const result of applied.transitions ?? []) {
        this.#hub.emit({ type: 'transition_applied', sessionKey: session.key, agentId: session.agent.id, result });
      }
      if (applied.stopQueued === true) this.#stopQueued(session);
      return applied.outcome;
    }
  }

  async #saveArrivalOnly(session: LiveSession, job: Job, error: unknown, outcome: Outcome): Promise<Outcome> {
    const failed: Outcome = { ...outcome, status: 'failed', error: asSignalyardError(error, 'CHECKPOINT_SAVE_FAILED') };
    try {
      await this.#load(session, true);
      const user = userMessageOf(job.signal);
      if (user === undefined) return failed;
      const history = trimHistory([...session.history, user], this.#o.maxHistoryMessages);
      const strategy = session.strategy as ExecutionStrategy;
      session.version = await this.#store.save(
        session.key,
        { v: 1, agentId: session.agent.id, strategy: strategy.snapshot(), history, engine: session.engineState },
        session.version,
      );
      session.history = history;
    } catch {
      session.loaded = false;
    }
    return failed;
  }

  /** Makes the session's state current: from the cache, or (when forced or not loaded) from the store. */
  async #load(session: LiveSession, force: boolean): Promise<void> {
    if (session.loaded && !force) return;
    const checkpoint = await this.#store.load(session.key);
    if (checkpoint === undefined) {
      if (session.loaded && session.version === 0) return;
      this.#install(session, this.#newStrategy(session.agent), 0, [], undefined);
      return;
    }
    if (session.loaded && checkpoint.version === session.version) return;
    const data = decodeCheckpoint(session.key, checkpoint.data);
    if (data.agentId !== session.agent.id) {
      throw new RunnerError({
        code: 'SESSION_AGENT_MISMATCH',
        message: `Session ${JSON.stringify(session.key)} belongs to agent ${JSON.stringify(data.agentId)}, not ${JSON.stringify(session.agent.id)}`,
      });
    }
    const strategy = this.#newStrategy(session.agent);
    strategy.restore(data.strategy);
    this.#install(
      session,
      strategy,
      checkpoint.version,
      trimHistory(data.history, this.#o.maxHistoryMessages),
      data.engine,
    );
  }

  #install(
    session: LiveSession,
    strategy: ExecutionStrategy,
    version: number,
    history: readonly ChatMessage[],
    engineState: unknown,
  ): void {
    session.router = new ComposedRouter({
      strategy: strategy.signalRoutes(),
      agent: session.agent.routes,
      plugin: this.#o.pluginRoutes,
    });
    session.strategy = strategy;
    session.version = version;
    session.history = history;
    session.engineState = engineState;
    session.loaded = true;
  }

  #newStrategy(agent: AgentRuntime): ExecutionStrategy {
    const factory = agent.definition.strategy;
    if (factory === undefined) return new DirectStrategy();
    let strategy: unknown;
    try {
      strategy = factory();
    } catch (error) {
      throw new RunnerError({
        code: 'STRATEGY_FACTORY_FAILED',
        message: `The strategy factory of agent "${agent.id}" threw: ${errorText(error)}`,
        cause: error,
      });
    }
    const s = strategy as Partial<ExecutionStrategy> | null;
    if (
      typeof s !== 'object' ||
      s === null ||
      typeof s.execute !== 'function' ||
      typeof s.canExecute !== 'function' ||
      typeof s.signalRoutes !== 'function' ||
      typeof s.snapshot !== 'function' ||
      typeof s.restore !== 'function'
    ) {
      throw new RunnerError({
        code: 'STRATEGY_FACTORY_FAILED',
        message: `The strategy factory of agent "${agent.id}" returned ${describeValue(strategy)}, not an ExecutionStrategy`,
      });
    }
    return s as ExecutionStrategy;
  }

  /** Routes the signal and applies its action to the live session state (nothing saved yet). */
  async #applyOnce(session: LiveSession, job: Job): Promise<Applied> {
    const { signal } = job;
    const strategy = session.strategy as ExecutionStrategy;
    const user = userMessageOf(signal);
    const history =
      user === undefined ? session.history : trimHistory([...session.history, user], this.#o.maxHistoryMessages);
    const arrival = user === undefined ? undefined : { history, engineState: session.engineState };

    let match: RouteMatch | undefined;
    try {
      match = (session.router as ComposedRouter).match(signal, session.ctx);
    } catch (error) {
      this.#hub.emit({
        type: 'route_decided',
        sessionKey: session.key,
        agentId: session.agent.id,
        signal,
        action: undefined,
      });
      return {
        outcome: this.#failedOutcome(session.key, session.agent.id, error, undefined, undefined),
        ...(arrival && { save: arrival }),
      };
    }
    // Runner defaults for unrouted signals: user_message → continue, stop → graceful_stop.
    const action =
      match?.action ??
      (signal.kind === 'user_message' ? Action.Continue : signal.kind === 'stop' ? Action.GracefulStop : undefined);
    this.#emitDecision(session, signal, action, match);

    if (action === undefined) {
      this.#hub.emit({ type: 'unrouted', sessionKey: session.key, agentId: session.agent.id, signal });
      return { outcome: this.#outcome(session, undefined, undefined, 'unrouted') };
    }
    switch (action.type) {
      case 'reject':
        return { outcome: this.#outcome(session, action, match, 'rejected'), ...(arrival && { save: arrival }) };
      case 'graceful_stop':
      case 'force_stop':
        return {
          outcome: this.#outcome(session, action, match, 'completed'),
          save: arrival ?? { history, engineState: session.engineState },
          stopQueued: true,
        };
      case 'transition': {
        const before = strategy.snapshot();
        try {
          const result = strategy.execute(action.target, signal.payload);
          return {
            outcome: { ...this.#outcome(session, action, match, 'completed'), output: result },
            save: { history, engineState: session.engineState },
            rollback: before,
            transitions: [result],
          };
        } catch (error) {
          const status = isSignalyardError(error) && REFUSED_TRANSITION.has(error.code) ? 'rejected' : 'failed';
          return {
            outcome: {
              ...this.#outcome(session, action, match, status),
              error: asSignalyardError(error, 'ENGINE_FAILED'),
            },
            ...(arrival && { save: arrival }),
          };
        }
      }
      case 'custom': {
        try {
          const output = await this.#runCustom(session, job, action.name);
          return {
            outcome: { ...this.#outcome(session, action, match, 'completed'), output },
            save: { history, engineState: session.engineState },
          };
        } catch (error) {
          const status = job.stop.aborted ? 'stopped' : 'failed';
          return {
            outcome: {
              ...this.#outcome(session, action, match, status),
              ...(status === 'failed' && { error: asSignalyardError(error, 'CUSTOM_ACTION_FAILED') }),
            },
            ...(arrival && { save: arrival }),
          };
        }
      }
      case 'continue':
        return this.#turn(session, job, action, match, history, arrival);
    }
  }

  async #runCustom(session: LiveSession, job: Job, name: string): Promise<unknown> {
    const handler = this.#customActions.get(name);
    if (handler === undefined) {
      throw new RunnerError({
        code: 'CUSTOM_ACTION_UNHANDLED',
        message: `No plugin handles custom action ${JSON.stringify(name)} (handled: ${JSON.stringify([...this.#customActions.keys()])})`,
      });
    }
    try {
      const run = Promise.resolve(
        handler({
          sessionKey: session.key,
          agentId: session.agent.id,
          signal: job.signal,
          abortSignal: job.stop.signal,
        }),
      );
      return await raceStop(
        run,
        job.stop,
        () => new AbortedError({ message: `custom action ${JSON.stringify(name)} was stopped` }),
      );
    } catch (error) {
      if (SignalyardError.isInstance(error)) throw error;
      throw new RunnerError({
        code: 'CUSTOM_ACTION_FAILED',
        message: `Custom action ${JSON.stringify(name)} failed: ${errorText(error)}`,
        cause: error,
      });
    }
  }

  /** A `continue`: one engine turn, then its actions, all or nothing. */
  async #turn(
    session: LiveSession,
    job: Job,
    action: Action,
    match: RouteMatch | undefined,
    history: readonly ChatMessage[],
    arrival: Applied['save'],
  ): Promise<Applied> {
    const { signal } = job;
    const strategy = session.strategy as ExecutionStrategy;
    const engine = session.agent.engine;
    const base = { sessionKey: session.key, agentId: session.agent.id };
    const stop = job.stop;
    let over = false;
    const ctx = new TurnContextImpl(
      session.key,
      session.agent.id,
      signal,
      history,
      session.engineState,
      strategy,
      stop,
      (event) => {
        if (over) return;
        if (typeof event !== 'object' || (event as unknown) === null || typeof event.type !== 'string') {
          this.#hub.emit({
            type: 'warning',
            message: `Engine of agent "${session.agent.id}" emitted ${describeValue(event)}: expected { type: string, ... }`,
          });
          return;
        }
        this.#hub.emit({ type: 'engine_event', ...base, event });
      },
    );
    const end = (outcome: Outcome, applied: Omit<Applied, 'outcome'>): Applied => {
      over = true;
      if (this.#hub.hasListeners) this.#hub.emit({ type: 'turn_end', ...base, status: outcome.status });
      return { outcome, ...applied };
    };
    const keepArrival = arrival === undefined ? {} : { save: arrival };

    if (this.#hub.hasListeners) this.#hub.emit({ type: 'turn_start', ...base });
    let result: unknown;
    try {
      if (engine === undefined)
        throw new RunnerError({ code: 'ENGINE_FAILED', message: `Agent "${session.agent.id}" has no engine` });
      result = await raceStop(engine(ctx), stop, () => new AbortedError({ message: 'The turn was stopped' }));
    } catch (error) {
      if (stop.aborted) return end(this.#outcome(session, action, match, 'stopped'), keepArrival);
      return end(
        { ...this.#outcome(session, action, match, 'failed'), error: asSignalyardError(error, 'ENGINE_FAILED') },
        keepArrival,
      );
    }
    if (stop.aborted) return end(this.#outcome(session, action, match, 'stopped'), keepArrival);

    const problem = turnResultProblem(result);
    if (problem !== undefined) {
      return end(
        {
          ...this.#outcome(session, action, match, 'failed'),
          error: new RunnerError({
            code: 'TURN_RESULT_INVALID',
            message: `Engine of agent "${session.agent.id}" returned ${problem}`,
          }),
        },
        keepArrival,
      );
    }
    const turn = (result ?? {}) as TurnResult;

    // TurnResult.actions: all or nothing.
    const before = strategy.snapshot();
    const transitions: TransitionResult[] = [];
    let stopQueued = false;
    for (const a of turn.actions ?? []) {
      let refusal: { status: 'rejected' | 'failed'; error?: SignalyardError } | undefined;
      try {
        if (a.type === 'transition') transitions.push(strategy.execute(a.target, signal.payload));
        else if (a.type === 'custom') await this.#runCustom(session, job, a.name);
        else if (a.type === 'graceful_stop' || a.type === 'force_stop') stopQueued = true;
        else if (a.type === 'reject') refusal = { status: 'rejected' };
        else
          throw new RunnerError({
            code: 'TURN_RESULT_INVALID',
            message: `A turn cannot return the action "${a.type}" in TurnResult.actions`,
          });
      } catch (error) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a force_stop can land while a custom handler runs
        if (stop.aborted) {
          strategy.restore(before);
          return end(this.#outcome(session, action, match, 'stopped'), keepArrival);
        }
        const refused = isSignalyardError(error) && REFUSED_TRANSITION.has(error.code);
        refusal = { status: refused ? 'rejected' : 'failed', error: asSignalyardError(error, 'ENGINE_FAILED') };
      }
      if (refusal !== undefined) {
        strategy.restore(before);
        return end(
          { ...this.#outcome(session, action, match, refusal.status), ...(refusal.error && { error: refusal.error }) },
          keepArrival,
        );
      }
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- custom action handlers awaited above can see a force_stop
    if (stop.aborted) {
      strategy.restore(before);
      return end(this.#outcome(session, action, match, 'stopped'), keepArrival);
    }

    const next =
      turn.messages === undefined || turn.messages.length === 0
        ? history
        : trimHistory([...history, ...turn.messages], this.#o.maxHistoryMessages);
    const engineState = Object.prototype.hasOwnProperty.call(turn, 'state') ? turn.state : session.engineState;
    const status = turn.status === 'paused' ? 'paused' : 'completed';
    return end(
      { ...this.#outcome(session, action, match, status), ...('output' in turn && { output: turn.output }) },
      { save: { history: next, engineState }, rollback: before, transitions, stopQueued },
    );
  }

  // ------------------------------------------------------------------ outcomes and events

  #emitDecision(session: LiveSession, signal: Signal, action: Action | undefined, match: RouteMatch | undefined): void {
    if (!this.#hub.hasListeners) return;
    this.#hub.emit({
      type: 'route_decided',
      sessionKey: session.key,
      agentId: session.agent.id,
      signal,
      action,
      ...(match !== undefined && { tier: match.tier }),
      ...(match?.route.name !== undefined && { routeName: match.route.name }),
    });
  }

  #outcome(
    session: LiveSession,
    action: Action | undefined,
    match: RouteMatch | undefined,
    status: Outcome['status'],
  ): Outcome {
    return {
      sessionKey: session.key,
      agentId: session.agent.id,
      action,
      decidedBy: match === undefined ? undefined : { tier: match.tier, route: match.route },
      status,
    };
  }

  #stoppedOutcome(session: LiveSession): Outcome {
    return this.#outcome(session, undefined, undefined, 'stopped');
  }

  #failedOutcome(
    sessionKey: string,
    agentId: string,
    error: unknown,
    action: Action | undefined,
    match: RouteMatch | undefined,
  ): Outcome {
    return {
      sessionKey,
      agentId,
      action,
      decidedBy: match === undefined ? undefined : { tier: match.tier, route: match.route },
      status: 'failed',
      error: asSignalyardError(error, 'ENGINE_FAILED'),
    };
  }
}

/** The TurnContext of one turn; `abortSignal` is made on first read (most turns never need one). */
class TurnContextImpl implements TurnContext {
  constructor(
    readonly sessionKey: string,
    readonly agentId: string,
    readonly signal: Signal,
    readonly history: readonly ChatMessage[],
    readonly state: unknown,
    readonly strategy: ExecutionStrategy,
    private readonly stopper: Stopper,
    readonly emit: TurnContext['emit'],
  ) {}

  get abortSignal(): AbortSignal {
    return this.stopper.signal;
  }
}

function turnResultProblem(result: unknown): string | undefined {
  if (result === undefined) return undefined;
  if (typeof result !== 'object' || result === null || Array.isArray(result))
    return `${describeValue(result)}, expected a TurnResult object`;
  const r = result as Record<string, unknown>;
  if (r.messages !== undefined) {
    if (!Array.isArray(r.messages)) return `messages ${describeValue(r.messages)}, expected a list of chat messages`;
    for (const m of r.messages as unknown[]) {
      const msg = m as Partial<ChatMessage> | null;
      if (
        typeof msg !== 'object' ||
        msg === null ||
        !['system', 'user', 'assistant', 'tool'].includes(msg.role as string) ||
        typeof msg.content !== 'string'
      ) {
        return `a message ${describeValue(m)}, expected { role, content }`;
      }
    }
  }
  if (r.status !== undefined && r.status !== 'completed' && r.status !== 'paused')
    return `status ${describeValue(r.status)}, expected "completed" or "paused"`;
  if (r.actions !== undefined) {
    if (!Array.isArray(r.actions)) return `actions ${describeValue(r.actions)}, expected a list of actions`;
    for (const a of r.actions as unknown[])
      if (!isAction(a)) return `an action ${describeValue(a)} that is not an Action`;
  }
  return undefined;
}

function asSignalyardError(error: unknown, code: RunnerErrorCode): SignalyardError {
  if (SignalyardError.isInstance(error)) return error;
  return new RunnerError({ code, message: errorText(error), cause: error });
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : describeValue(error);
}

function inputError(message: string, cause?: unknown): RunnerError {
  return new RunnerError({ code: 'RUNNER_INPUT_INVALID', message, ...(cause !== undefined && { cause }) });
}

function closedError(): RunnerError {
  return new RunnerError({
    code: 'RUNNER_CLOSED',
    message: 'The runner is closed (or closing): create a new runner to serve more signals',
  });
}

function startFailed(error: unknown): RunnerError {
  return new RunnerError({
    code: 'RUNNER_START_FAILED',
    message: `The runner could not start: ${errorText(error)}`,
    cause: error,
  });
}

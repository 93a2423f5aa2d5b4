import { DEFAULT_MAX_CAUSE_PAYLOAD_BYTES, type Redact } from './cause-payload.js';
import type { CauseOptions } from './session-cause.js';
import { completeCause } from './turn-record.js';
import {
  CheckpointConflictError,
  DEFAULT_MAX_OUTCOME_BYTES,
  DirectStrategy,
  describeValue,
  isSignalyardError,
  type CheckpointStore,
  type Clock,
  type ExecutionStrategy,
  type Outcome,
  type SessionCause,
  type SessionCheckpointV1,
  type Signal,
  type SignalRoute,
  type StrategySnapshot,
} from '@signalyard/core';
import { errorText, saveAtOnce } from '@signalyard/core/internal';
import { ComposedRouter } from '@signalyard/router';
import { NO_ALIASES, aliasesOf, keptAliases } from './approval-aliases.js';
import {
  NO_APPROVALS,
  carriedFields,
  decodeCheckpoint,
  ownCheckpoint,
  pendingOf,
  staleOf,
} from './checkpoint-format.js';
import { RunnerError } from './errors/runner-error.js';
import { NO_HISTORY, appendHistory, keptHistory, userMessageOf } from './history.js';
import { UNLOADED, type LiveSession, type LoadedState } from './live-session.js';
import {
  carriedWithMark,
  settlingMark,
  withBatchOutcomes,
  withOutcome,
  withUnstored,
  type InboxMark,
} from './inbox-fields.js';
import { agentMismatch } from './outcomes.js';
import type { SessionSave } from './session-save.js';
import type { AgentRuntime } from './runner-options.js';

/** No carried checkpoint fields (the common case): shared, so a save can tell at once. */
const NO_FIELDS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * A session's checkpoint: loading it into a {@link LoadedState} (restoring a new strategy
 * instance from the snapshot), saving with compare-and-set, and saving only what arrived when a
 * turn's effects cannot be stored.
 * @internal
 */
export class SessionPersistence {
  readonly #store: CheckpointStore;
  readonly #maxHistoryMessages: number;
  readonly #pluginRoutes: readonly SignalRoute[];
  /** The runner's clock: what stamps the `cause.at` of every version saved. */
  readonly clock: Clock;
  /** What every version's cause is made with: the clock, the payload cap, `redact`. */
  readonly causes: CauseOptions;
  /** What an outcome recorded in a settling save (`inboxOutcomes`) keeps of its output, at most. */
  readonly #maxOutcomeBytes: number;

  constructor(options: {
    store: CheckpointStore;
    maxHistoryMessages: number;
    pluginRoutes: readonly SignalRoute[];
    clock: Clock;
    maxCausePayloadBytes?: number;
    redact?: Redact | undefined;
    /** Default: core's 256 KiB. */
    maxOutcomeBytes?: number;
  }) {
    this.#store = options.store;
    this.clock = options.clock;
    this.causes = {
      clock: options.clock,
      maxPayloadBytes: options.maxCausePayloadBytes ?? DEFAULT_MAX_CAUSE_PAYLOAD_BYTES,
      redact: options.redact,
    };
    this.#maxOutcomeBytes = options.maxOutcomeBytes ?? DEFAULT_MAX_OUTCOME_BYTES;
    this.#maxHistoryMessages = options.maxHistoryMessages;
    this.#pluginRoutes = options.pluginRoutes;
  }

  /**
   * The mark of what `session` is settling now ({@link settlingMark}) with `outcome` recorded
   * (`inboxOutcomes`) for its entry — or, for a batch, for each member it covers
   * ({@link withBatchOutcomes}). `undefined` on the in-process path.
   */
  settling(session: LiveSession, outcome: Outcome): InboxMark | undefined {
    const mark = settlingMark(session);
    if (mark === undefined) return undefined;
    const { batch } = session;
    const settled =
      batch === undefined
        ? this.withOutcome(mark, outcome)
        : withBatchOutcomes(
            mark,
            batch.members,
            batch.through,
            outcome,
            this.#maxOutcomeBytes,
            (job) => batch.memberOutcome(job, outcome),
            batch.waiting,
          );
    return withUnstored(settled, session.unstoredOutcomes);
  }

  /** `mark` with `outcome` recorded for its entry, capped like the outcome `putOutcome` stores. */
  withOutcome(mark: InboxMark, outcome: Outcome): InboxMark {
    return withOutcome(mark, outcome, this.#maxOutcomeBytes);
  }

  /** Loads the session unless loaded (or `force`), joining a load already in flight. */
  async loadShared(session: LiveSession, force = false): Promise<LoadedState> {
    while (session.loading !== undefined) {
      try {
        await session.loading;
      } catch {
        // the other load's caller reports it; try again below
      }
    }
    if (session.state.kind === 'loaded' && !force) return session.state;
    const loading = this.load(session, true);
    session.loading = loading;
    try {
      return await loading;
    } finally {
      session.loading = undefined;
    }
  }

  /** Makes the session's state current: from the cache, or (when forced or not loaded) from the store. */
  async load(session: LiveSession, force: boolean): Promise<LoadedState> {
    const current = session.state;
    if (current.kind === 'loaded' && !force) return current;
    const checkpoint = await this.#store.load(session.key);
    if (checkpoint === undefined) {
      if (current.kind === 'loaded' && current.version === 0) return current;
      const fresh = newStrategy(session.agent);
      return this.#install(session, fresh, 0, {
        savedStrategy: initialSnapshot(fresh),
        history: NO_HISTORY,
        engineState: undefined,
        pendingApprovals: NO_APPROVALS,
        staleApprovals: NO_APPROVALS,
        aliases: NO_ALIASES,
        carried: NO_FIELDS,
      });
    }
    if (current.kind === 'loaded' && checkpoint.version === current.version) return current;
    const data = decodeCheckpoint(session.key, checkpoint.data);
    if (data.agentId !== session.agent.id) throw agentMismatch(session.key, data.agentId, session.agent.id);
    const strategy = newStrategy(session.agent);
    strategy.restore(data.strategy);
    return this.#install(session, strategy, checkpoint.version, {
      savedStrategy: data.strategy,
      history: keptHistory(data.history, this.#maxHistoryMessages),
      engineState: data.engine,
      pendingApprovals: pendingOf(data),
      staleApprovals: staleOf(data),
      aliases: aliasesOf(data),
      carried: carriedFields(data, NO_FIELDS),
    });
  }

  #install(
    session: LiveSession,
    strategy: ExecutionStrategy,
    version: number,
    parts: Pick<
      LoadedState,
      'history' | 'engineState' | 'pendingApprovals' | 'staleApprovals' | 'aliases' | 'carried' | 'savedStrategy'
    >,
  ): LoadedState {
    const router = new ComposedRouter({
      strategy: strategy.signalRoutes(),
      agent: session.agent.routes,
      plugin: this.#pluginRoutes,
    });
    const state: LoadedState = {
      kind: 'loaded',
      strategy,
      router,
      version,
      history: parts.history,
      engineState: parts.engineState,
      pendingApprovals: parts.pendingApprovals,
      staleApprovals: parts.staleApprovals,
      aliases: parts.aliases,
      carried: parts.carried,
      savedStrategy: parts.savedStrategy,
    };
    session.state = state;
    return state;
  }

  /**
   * Saves `save` with the strategy's snapshot (or `strategy`, when given), compare-and-set on the
   * loaded version; on success the loaded state takes the new version, history and engine state.
   * On failure the session is unloaded (the next signal reloads it) and the error rethrown.
   * `mark`: the inbox entry this save settles (default: the one `session` is applying, if any),
   * recorded in the same compare-and-set save (`inboxSeq`, or `inboxPartial` for a commit).
   */
  async save(
    session: LiveSession,
    loaded: LoadedState,
    save: SessionSave,
    cause: SessionCause,
    strategy?: StrategySnapshot,
    mark: InboxMark | undefined = settlingMark(session),
  ): Promise<void> {
    const pending = this.startSave(session, loaded, save, cause, strategy, mark);
    if (typeof pending === 'number') return; // saved at once
    let version: number;
    try {
      version = await pending.version;
    } catch (error) {
      pending.failed();
      throw error;
    }
    pending.done(version);
  }

  /**
   * {@link SessionPersistence.save} in two steps, for a caller that awaits the store in its own
   * frame (the Runner's hot path: no async frame of its own): the checkpoint built and handed to
   * the store now; the {@link PendingSave}'s `version` settles with the store's answer, then
   * `done(version)` — or `failed()` when it rejects. The new version itself when the store saved
   * it at once (the memory store): the loaded state has taken it already (no `PendingSave` made).
   * Throws (the session unloaded) when the checkpoint cannot be built or the store refuses it at once.
   * `at`: the reading of the runner's clock the cause was stamped with in this synchronous step
   * (the memory store, on that same clock, stamps the save with it: core/internal `saveAtOnce`).
   */
  startSave(
    session: LiveSession,
    loaded: LoadedState,
    save: SessionSave,
    cause: SessionCause,
    strategy?: StrategySnapshot,
    mark: InboxMark | undefined = settlingMark(session),
    at?: number,
  ): PendingSave | number {
    const pending = save.pendingApprovals ?? loaded.pendingApprovals;
    const stale = save.staleApprovals ?? loaded.staleApprovals;
    // Aliases only for what is still open: a decided approval's old and new ids are both gone.
    const kept = save.aliases ?? loaded.aliases;
    const aliases = kept === NO_ALIASES ? undefined : keptAliases(kept, [...pending, ...stale]);
    try {
      const snapshot = strategy ?? loaded.strategy.snapshot();
      const completed = completeCause(cause, save.record, save.reply, snapshot);
      const carried =
        mark === undefined ? loaded.carried : carriedWithMark(loaded.carried, mark, session.storedOutcomes);
      let checkpoint: SessionCheckpointV1;
      if (carried === NO_FIELDS && pending.length === 0 && stale.length === 0 && aliases === undefined)
        // The common case: no approval fields, nothing carried (frozen and shared when it can be).
        checkpoint = ownCheckpoint(session.agent.id, snapshot, save.history, save.engineState, completed);
      else {
        const own: { -readonly [K in keyof SessionCheckpointV1]: SessionCheckpointV1[K] } = {
          v: 1,
          agentId: session.agent.id,
          strategy: snapshot,
          history: save.history,
          engine: save.engineState,
          cause: completed,
        };
        // The approval fields only when there are any: most sessions never have one.
        if (pending.length > 0) own.pendingApprovals = pending;
        if (stale.length > 0) own.staleApprovals = stale;
        if (aliases !== undefined) (own as Record<string, unknown>).approvalAliases = aliases;
        // Carried fields go first (the runner's own win).
        checkpoint = carried === NO_FIELDS ? own : { ...carried, ...own };
      }
      // The memory store answers at once (no promise): the caller's next step needs no microtask.
      const clock = at === undefined ? undefined : this.causes.clock;
      const version = saveAtOnce(this.#store, session.key, checkpoint, loaded.version, clock, at);
      if (typeof version !== 'number')
        return new PendingSave(session, loaded, save, snapshot, carried, pending, stale, aliases, version, completed);
      savedAs(loaded, save, snapshot, carried, pending, stale, aliases, version);
      if (completed.summary !== undefined) session.savedCause = completed;
      return version;
    } catch (error) {
      session.state = UNLOADED;
      throw error;
    }
  }

  /**
   * Saves only what arrived — the signal's user message — on the state reloaded from the store,
   * with the strategy snapshot stored there (the strategy is not asked again: its `snapshot()` may
   * be what threw); `outcome`: the signal's outcome, recorded for its inbox entry. `initial`: the snapshot of the state that was loaded before, for a session
   * never saved whose fresh strategy cannot give one. For a signal whose own effects cannot be
   * stored or were lost. Never throws: when even that fails, the session is left unloaded (the
   * next signal reloads it).
   */
  async saveArrival(
    session: LiveSession,
    signal: Signal,
    cause: SessionCause,
    initial?: StrategySnapshot,
    outcome?: Outcome,
  ): Promise<void> {
    try {
      const loaded = await this.load(session, true);
      const user = userMessageOf(signal);
      if (user === undefined) return;
      await this.save(
        session,
        loaded,
        {
          history: appendHistory(loaded.history, user, this.#maxHistoryMessages),
          engineState: loaded.engineState,
        },
        cause,
        loaded.savedStrategy ?? (loaded.version === 0 ? initial : undefined),
        outcome === undefined ? settlingMark(session) : this.settling(session, outcome),
      );
    } catch {
      session.state = UNLOADED;
    }
  }

  /** The stored checkpoint of `key`, decoded, with its version; `undefined` when none. */
  async read(key: string): Promise<{ version: number; data: SessionCheckpointV1 } | undefined> {
    const checkpoint = await this.#store.load(key);
    if (checkpoint === undefined) return undefined;
    return { version: checkpoint.version, data: decodeCheckpoint(key, checkpoint.data) };
  }
}

/**
 * A save handed to the store ({@link SessionPersistence.startSave}): `version` settles with the
 * store's answer; `done` then gives the loaded state what was saved, `failed` unloads the session.
 * @internal
 */
export class PendingSave {
  constructor(
    readonly session: LiveSession,
    readonly loaded: LoadedState,
    readonly save: SessionSave,
    readonly snapshot: StrategySnapshot,
    readonly carried: Readonly<Record<string, unknown>>,
    readonly pending: LoadedState['pendingApprovals'],
    readonly stale: LoadedState['staleApprovals'],
    readonly aliases: Readonly<Record<string, string>> | undefined,
    /** The new version, or the store's promise of it (the memory store answers at once: `saveAtOnce`). */
    readonly version: number | Promise<number>,
    /** The cause saved (the `outcome` event's `cause` once saved, when it has a summary). */
    readonly cause?: SessionCause,
  ) {}

  /** The store saved it as `version`: the loaded state takes it. */
  done(version: number): void {
    savedAs(this.loaded, this.save, this.snapshot, this.carried, this.pending, this.stale, this.aliases, version);
    if (this.cause?.summary !== undefined) this.session.savedCause = this.cause;
  }

  /** The store refused it: the session is unloaded (the next signal reloads it). */
  failed(): void {
    this.session.state = UNLOADED;
  }
}

/** A save the store answered with `version`: `loaded` takes what was saved. */
function savedAs(
  loaded: LoadedState,
  save: SessionSave,
  snapshot: StrategySnapshot,
  carried: Readonly<Record<string, unknown>>,
  pending: LoadedState['pendingApprovals'],
  stale: LoadedState['staleApprovals'],
  aliases: Readonly<Record<string, string>> | undefined,
  version: number,
): void {
  loaded.version = version;
  loaded.carried = carried;
  loaded.savedStrategy = snapshot;
  loaded.history = save.history;
  loaded.engineState = save.engineState;
  loaded.pendingApprovals = pending;
  loaded.staleApprovals = stale;
  loaded.aliases = aliases === undefined ? NO_ALIASES : new Map(Object.entries(aliases));
}

/** A fresh strategy's snapshot, `undefined` when its `snapshot()` throws (the first save reports it). */
function initialSnapshot(strategy: ExecutionStrategy): StrategySnapshot | undefined {
  try {
    return strategy.snapshot();
  } catch {
    return undefined;
  }
}

/** True for an error that a save retries by reloading and re-applying. @internal */
export function isConflict(error: unknown): boolean {
  return CheckpointConflictError.isInstance(error);
}

/** True for a checkpoint whose data cannot be stored (the turn's effects are dropped). @internal */
export function isUnstorable(error: unknown): boolean {
  return isSignalyardError(error, 'CHECKPOINT_DATA_INVALID');
}

/**
 * A new strategy instance from the agent's factory (a `DirectStrategy` without one).
 * @throws RunnerError `STRATEGY_FACTORY_FAILED` when the factory throws or returns something else.
 * @internal
 */
export function newStrategy(agent: AgentRuntime): ExecutionStrategy {
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
  if (!isStrategy(strategy)) {
    throw new RunnerError({
      code: 'STRATEGY_FACTORY_FAILED',
      message: `The strategy factory of agent "${agent.id}" returned ${describeValue(strategy)}, not an ExecutionStrategy`,
    });
  }
  return strategy;
}

function isStrategy(value: unknown): value is ExecutionStrategy {
  const s = value as Partial<ExecutionStrategy> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.execute === 'function' &&
    typeof s.canExecute === 'function' &&
    typeof s.signalRoutes === 'function' &&
    typeof s.snapshot === 'function' &&
    typeof s.restore === 'function'
  );
}

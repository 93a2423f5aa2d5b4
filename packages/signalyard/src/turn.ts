import {
  AbortedError,
  describeValue,
  type ApprovalDecision,
  type PendingApproval,
  isTransitionRefusal,
  type Action,
  type ChatMessage,
  type ExecutionStrategy,
  type Outcome,
  type RunnerEvent,
  type Signal,
  type TextSource,
  type TransitionResult,
} from '@signalyard/core';
import { errorText, type EventChannel } from '@signalyard/core/internal';
import type { RouteMatch } from '@signalyard/router';
import {
  enginePending,
  engineDecisions,
  publicApprovalEvent,
  publicIds,
  publicPending,
  type ApprovalAliases,
} from './approval-aliases.js';
import { AnnouncedApprovals, impliedApprovalEvents, turnApprovals } from './approvals.js';
import { NO_APPROVALS } from './checkpoint-format.js';
import type { TurnContext, TurnResult } from './engine.js';
import { RunnerError } from './errors/runner-error.js';
import { appendHistory, keptMessages } from './history.js';
import type { Job, LiveSession, LoadedState } from './live-session.js';
import { asSignalyardError, outcomeOf, type Applied, type OutcomeParts, type SessionSave } from './outcomes.js';
import type { PluginHost } from './plugin-host.js';
import type { SessionPersistence } from './session-persistence.js';
import { raceStop, type Stopper } from './stopper.js';
import { TurnCommits } from './turn-commit.js';
import { turnResultProblem } from './turn-result.js';
import type { TurnSink } from './turn-stream.js';

/** What a turn works with. @internal */
export interface TurnDeps {
  readonly hub: EventChannel<RunnerEvent>;
  readonly plugins: PluginHost;
  readonly persistence: SessionPersistence;
  readonly maxHistoryMessages: number;
}

/** One `continue`: the session, its loaded state, the signal's job and the route decision. @internal */
export interface TurnInput {
  readonly session: LiveSession;
  readonly loaded: LoadedState;
  readonly job: Job;
  readonly action: Action;
  readonly match: RouteMatch | undefined;
  /** The history with the signal's user message. */
  readonly history: readonly ChatMessage[];
  /** What to save when the turn changes nothing: the arrival, or nothing. */
  readonly arrival: SessionSave | undefined;
  /** A merged turn's signals in arrival order (`job.signal` is the last); absent: `[job.signal]`. */
  readonly signals?: readonly Signal[];
}

/** Ends a turn: `turn_end` once, then what was applied. */
type EndTurn = (parts: OutcomeParts, applied?: Omit<Applied, 'outcome'>) => Applied;

/** A turn in progress: its commits, its approvals, the engine's own approval events, whether it is over. */
interface TurnRun {
  over: boolean;
  /** Made by the turn's first `ctx.commit` (most turns never commit). */
  commits: TurnCommits | undefined;
  /** The decisions the turn applies, with public ids (`ctx.approvals` has the engine's). */
  readonly approvals: readonly ApprovalDecision[];
  /** The checkpoint's approval aliases when the turn started (public id → the engine's). */
  readonly aliases: ApprovalAliases;
  /** The engine's id → the public one. */
  readonly toPublic: ReadonlyMap<string, string>;
  /** The approvals pending and stale when the turn started (a commit changes the loaded ones). */
  readonly pendingBefore: readonly PendingApproval[];
  readonly staleBefore: LoadedState['staleApprovals'];
  /** Approval ids the engine announced itself (made on its first approval event). */
  announced: AnnouncedApprovals | undefined;
}

/**
 * A `continue`: one engine turn, then its `TurnResult.actions`, all or nothing. Emits
 * `turn_start` / `turn_end` (when anyone listens) and the engine's own events as `engine_event`.
 * @internal
 */
export async function runTurn(deps: TurnDeps, t: TurnInput): Promise<Applied> {
  const { hub } = deps;
  const { session, job } = t;
  const stop = job.stop;
  const approvals = turnApprovals(job.signal, t.loaded.staleApprovals);
  const { aliases } = t.loaded;
  const run: TurnRun = {
    over: false,
    approvals,
    aliases,
    toPublic: publicIds(aliases),
    pendingBefore: t.loaded.pendingApprovals,
    staleBefore: t.loaded.staleApprovals,
    announced: undefined,
    commits: undefined,
  };
  const keepArrival = t.arrival === undefined ? {} : { save: t.arrival };
  const end: EndTurn = (parts, applied) => {
    run.over = true;
    const conflict = run.commits?.conflict;
    // A commit lost to another writer: nothing of this attempt is saved; the signal is applied again.
    const final = conflict === undefined ? parts : { status: 'failed' as const, error: conflict };
    if (hub.hasListeners) hub.emit({ type: 'turn_end', ...session.ctx, status: final.status });
    const outcome = outcomeOf(session.ctx, final, t.action, t.match);
    if (conflict !== undefined) return { outcome, conflict };
    // After a commit, what arrived is saved already: a failure saves nothing more.
    return { outcome, ...(applied ?? (job.committed === true ? {} : keepArrival)) };
  };
  const ctx = turnContext(deps, t, run);
  if (hub.hasListeners) hub.emit({ type: 'turn_start', ...session.ctx });
  let result: unknown;
  try {
    const engine = session.agent.engine;
    if (engine === undefined)
      throw new RunnerError({ code: 'ENGINE_FAILED', message: `Agent "${session.agent.id}" has no engine` });
    // An engine may return a plain TurnResult as well as a promise of one.
    result = await raceStop(
      Promise.resolve(engine(ctx)),
      stop,
      () => new AbortedError({ message: 'The turn was stopped' }),
    );
  } catch (error) {
    if (stop.aborted) return end({ status: 'stopped' });
    return end({ status: 'failed', error: asSignalyardError(error, 'ENGINE_FAILED') });
  }
  if (stop.aborted) return end({ status: 'stopped' });
  let problem: string | undefined;
  try {
    problem = turnResultProblem(result);
  } catch (error) {
    problem = `a value that cannot be read (${errorText(error)})`; // a throwing getter, a hostile Proxy
  }
  if (problem !== undefined) {
    const message = `Engine of agent "${session.agent.id}" returned ${problem}`;
    return end({ status: 'failed', error: new RunnerError({ code: 'TURN_RESULT_INVALID', message }) });
  }
  return applyTurnResult(deps, t, run, result ?? {}, end);
}

/** The engine's {@link TurnContext} for one turn. */
function turnContext(deps: TurnDeps, t: TurnInput, run: TurnRun): TurnContextImpl {
  const { hub } = deps;
  const { session, job } = t;
  const { sink } = job;
  return new TurnContextImpl({
    sessionKey: session.key,
    agentId: session.agent.id,
    signal: job.signal,
    signals: t.signals,
    history: t.history,
    state: t.loaded.engineState,
    strategy: t.loaded.strategy,
    stopper: job.stop,
    approvals: engineDecisions(run.approvals, run.aliases),
    pendingApprovals: enginePending(run.pendingBefore, run.aliases),
    commit: (state) => {
      run.commits ??= new TurnCommits(deps.persistence, t, run.approvals, () => run.over);
      return run.commits.commit(state);
    },
    emit: (event) => {
      if (run.over) return;
      if (isApprovalEvent(event)) {
        const shown = publicApprovalEvent(event, run.toPublic);
        (run.announced ??= new AnnouncedApprovals()).note(shown);
        forwardEngineEvent(hub, session, shown, sink);
        return;
      }
      forwardEngineEvent(hub, session, event, sink);
    },
    emitText:
      sink === undefined
        ? noText
        : (delta, source) => {
            if (!run.over) forwardText(hub, session, sink, delta, source);
          },
  });
}

function isApprovalEvent(event: unknown): event is { type: string } & Record<string, unknown> {
  if (typeof event !== 'object' || event === null) return false;
  const type = (event as { type?: unknown }).type;
  return type === 'approval_requested' || type === 'approval_resolved';
}

/** Applies a valid `TurnResult`: its actions all or nothing, then what to save. */
async function applyTurnResult(
  deps: TurnDeps,
  t: TurnInput,
  run: TurnRun,
  turn: TurnResult,
  end: EndTurn,
): Promise<Applied> {
  const { strategy } = t.loaded;
  const before = strategy.snapshot();
  const applied = await applyTurnActions(deps, t, turn.actions ?? []);
  // A force_stop can land while a custom action handler runs.
  if (t.job.stop.aborted) {
    strategy.restore(before);
    return end({ status: 'stopped' });
  }
  if ('refusal' in applied) {
    strategy.restore(before);
    return end(applied.refusal);
  }
  const next =
    turn.messages === undefined || turn.messages.length === 0
      ? t.history
      : appendHistory(t.history, keptMessages(turn.messages), deps.maxHistoryMessages);
  const engineState = Object.prototype.hasOwnProperty.call(turn, 'state') ? turn.state : t.loaded.engineState;
  const pending =
    turn.pendingApprovals === undefined || turn.pendingApprovals.length === 0
      ? NO_APPROVALS
      : publicPending(turn.pendingApprovals, run.toPublic);
  announceApprovals(deps, t, run, pending);
  const paused = pending.length > 0 || turn.status === 'paused';
  const parts: { -readonly [K in keyof OutcomeParts]: OutcomeParts[K] } = { status: paused ? 'paused' : 'completed' };
  if ('output' in turn) parts.output = turn.output;
  if (pending.length > 0) parts.pendingApprovals = pending;
  return end(parts, {
    save: { history: next, engineState, pendingApprovals: pending, staleApprovals: NO_APPROVALS, aliases: run.aliases },
    rollback: before,
    transitions: applied.transitions,
    stopQueued: applied.stopQueued,
  });
}

/** Emits the approval events the turn implies and its engine did not emit itself. */
function announceApprovals(deps: TurnDeps, t: TurnInput, run: TurnRun, after: readonly PendingApproval[]): void {
  const before = run.pendingBefore;
  if (before.length === 0 && after.length === 0 && run.approvals.length === 0) return;
  const events = impliedApprovalEvents(
    { before, stale: run.staleBefore, after, decisions: run.approvals },
    run.announced ?? new AnnouncedApprovals(),
  );
  for (const event of events) forwardEngineEvent(deps.hub, t.session, event, t.job.sink);
}

type ActionsApplied =
  | { readonly transitions: TransitionResult[]; readonly stopQueued: boolean }
  | { readonly refusal: { readonly status: Outcome['status']; readonly error?: unknown } };

/** Applies `TurnResult.actions` in order; stops at the first one refused or failing (or at an abort). */
async function applyTurnActions(deps: TurnDeps, t: TurnInput, actions: readonly Action[]): Promise<ActionsApplied> {
  const { session, job } = t;
  const transitions: TransitionResult[] = [];
  let stopQueued = false;
  for (const a of actions) {
    try {
      if (a.type === 'transition') transitions.push(t.loaded.strategy.execute(a.target, job.signal.payload));
      else if (a.type === 'custom')
        await deps.plugins.runCustom({ ...session.ctx, signal: job.signal, name: a.name, stop: job.stop });
      else if (a.type === 'graceful_stop' || a.type === 'force_stop') stopQueued = true;
      else if (a.type === 'reject') return { refusal: { status: 'rejected' } };
      // 'continue' never gets here: turnResultProblem refuses it before any action runs.
    } catch (error) {
      if (job.stop.aborted) return { transitions, stopQueued }; // the caller sees the abort
      const status = isTransitionRefusal(error) ? 'rejected' : 'failed';
      return { refusal: { status, error: asSignalyardError(error, 'ENGINE_FAILED') } };
    }
  }
  return { transitions, stopQueued };
}

const noText = (): void => undefined;

/** A streamed turn's text: a `text_delta` TurnEvent, and an `engine_event` of type `text_delta` for plugins. */
function forwardText(
  hub: EventChannel<RunnerEvent>,
  session: LiveSession,
  sink: TurnSink,
  delta: unknown,
  source: TextSource | undefined,
): void {
  if (typeof delta !== 'string') {
    hub.emit({
      type: 'warning',
      message: `Engine of agent "${session.agent.id}" emitted text ${describeValue(delta)}: expected a string`,
    });
    return;
  }
  if (delta === '') return;
  const withSource = source === undefined ? {} : { source };
  sink({ type: 'text_delta', agentId: session.agent.id, delta, ...withSource });
  if (hub.hasListeners)
    hub.emit({ type: 'engine_event', ...session.ctx, event: { type: 'text_delta', delta, ...withSource } });
}

function forwardEngineEvent(
  hub: EventChannel<RunnerEvent>,
  session: LiveSession,
  event: unknown,
  sink: TurnSink | undefined,
): void {
  if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') {
    hub.emit({
      type: 'warning',
      message: `Engine of agent "${session.agent.id}" emitted ${describeValue(event)}: expected { type: string, ... }`,
    });
    return;
  }
  const engineEvent = event as { type: string } & Record<string, unknown>;
  sink?.({ type: 'engine_event', event: engineEvent });
  hub.emit({ type: 'engine_event', ...session.ctx, event: engineEvent });
}

/** The parts of a {@link TurnContextImpl}. */
interface TurnContextParts {
  readonly sessionKey: string;
  readonly agentId: string;
  readonly signal: Signal;
  readonly signals: readonly Signal[] | undefined;
  readonly history: readonly ChatMessage[];
  readonly state: unknown;
  readonly strategy: ExecutionStrategy;
  readonly stopper: Stopper;
  readonly approvals: readonly ApprovalDecision[];
  readonly pendingApprovals: readonly PendingApproval[];
  readonly commit: TurnContext['commit'];
  readonly emit: TurnContext['emit'];
  readonly emitText: TurnContext['emitText'];
}

/** The TurnContext of one turn; `abortSignal` is made on first read (most turns never need one). */
class TurnContextImpl implements TurnContext {
  readonly sessionKey: string;
  readonly agentId: string;
  readonly signal: Signal;
  readonly history: readonly ChatMessage[];
  readonly state: unknown;
  readonly strategy: ExecutionStrategy;
  readonly emit: TurnContext['emit'];
  readonly emitText: TurnContext['emitText'];
  readonly streaming: boolean;
  readonly approvals: readonly ApprovalDecision[];
  readonly pendingApprovals: readonly PendingApproval[];
  readonly #stopper: Stopper;
  readonly commit: TurnContext['commit'];
  #signals: readonly Signal[] | undefined;

  constructor(parts: TurnContextParts) {
    this.sessionKey = parts.sessionKey;
    this.agentId = parts.agentId;
    this.signal = parts.signal;
    this.history = parts.history;
    this.state = parts.state;
    this.strategy = parts.strategy;
    this.emit = parts.emit;
    this.emitText = parts.emitText;
    this.streaming = parts.emitText !== noText;
    this.approvals = parts.approvals;
    this.pendingApprovals = parts.pendingApprovals;
    this.#stopper = parts.stopper;
    this.commit = parts.commit;
    this.#signals = parts.signals;
  }

  get abortSignal(): AbortSignal {
    return this.#stopper.signal;
  }

  /** Made on first read for a single signal's turn (most engines never look). */
  get signals(): readonly Signal[] {
    return (this.#signals ??= Object.freeze([this.signal]));
  }
}

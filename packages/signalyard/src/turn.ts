import {
  AbortedError,
  describeValue,
  type ApprovalDecision,
  type PendingApproval,
  isTransitionRefusal,
  type Action,
  type Outcome,
  type RunnerEvent,
  type StrategySnapshot,
  type TextSource,
  type TransitionResult,
} from '@signalyard/core';
import { errorText, type EventChannel } from '@signalyard/core/internal';
import { publicApprovalEvent, publicIds, publicPending, type ApprovalAliases } from './approval-aliases.js';
import { NO_PENDING_APPROVAL, checkDecisions, decidesNothingPending, withUnknownIds } from './approval-checks.js';
import { AnnouncedApprovals, approvalSummaryOf, impliedApprovalEvents, turnApprovals } from './approvals.js';
import { NO_APPROVALS } from './checkpoint-format.js';
import type { TurnResult } from './engine.js';
import { RunnerError } from './errors/runner-error.js';
import { appendHistory, keptMessages } from './history.js';
import type { LiveSession, LoadedState } from './live-session.js';
import type { OutcomeParts } from './outcome-parts.js';
import { asSignalyardError, outcomeOf, type Applied } from './outcomes.js';
import type { TurnInput } from './turn-input.js';
import type { PluginHost } from './plugin-host.js';
import type { SessionPersistence } from './session-persistence.js';
import { raceStop } from './stopper.js';
import { TurnCommits } from './turn-commit.js';
import { turnResultProblem } from './turn-result.js';
import type { TurnSink } from './turn-stream.js';
import { TurnRecord, replyOf } from './turn-record.js';
import { TurnContextImpl } from './turn-context.js';

/** What a turn works with. @internal */
export interface TurnDeps {
  readonly hub: EventChannel<RunnerEvent>;
  readonly plugins: PluginHost;
  readonly persistence: SessionPersistence;
  readonly maxHistoryMessages: number;
}

/**
 * A turn in progress: its input, its commits, its approvals, the engine's own approval events,
 * whether it is over. One object per turn: the engine's context reads it, and `end` closes it.
 * @internal
 */
export class Turn {
  readonly deps: TurnDeps;
  /**
   * Settles as the engine's turn does (not raced with the job's stop: {@link raceEngine} is):
   * set by {@link startTurn}, awaited by its caller, then {@link endTurn}.
   */
  engineDone: Promise<unknown> | undefined = undefined;
  readonly t: TurnInput;
  over = false;
  /** Made by the turn's first `ctx.commit` (most turns never commit). */
  commits: TurnCommits | undefined = undefined;
  /** The decisions the turn applies, with public ids (`ctx.approvals` has the engine's). */
  readonly approvals: readonly ApprovalDecision[];
  /** The ids of the signal's decisions that named no pending approval (ignored; listed in the output). */
  readonly unknownIds: readonly string[];
  /** The checkpoint's approval aliases when the turn started (public id → the engine's). */
  readonly aliases: ApprovalAliases;
  /** The engine's id → the public one. */
  readonly toPublic: ReadonlyMap<string, string>;
  /** The approvals pending and stale when the turn started (a commit changes the loaded ones). */
  readonly pendingBefore: readonly PendingApproval[];
  readonly staleBefore: LoadedState['staleApprovals'];
  /** Approval ids the engine announced itself (made on its first approval event). */
  announced: AnnouncedApprovals | undefined = undefined;
  /** What the engine's events said the turn did (handoffs, tool calls, policy decisions), for `cause.summary`. */
  record: TurnRecord | undefined = undefined;

  constructor(deps: TurnDeps, t: TurnInput) {
    this.deps = deps;
    this.t = t;
    const { loaded } = t;
    const check = checkDecisions(t.job.signal, loaded.pendingApprovals);
    this.unknownIds = check.unknownIds;
    this.approvals = turnApprovals(check.pending, loaded.staleApprovals);
    this.aliases = loaded.aliases;
    this.toPublic = publicIds(loaded.aliases);
    this.pendingBefore = loaded.pendingApprovals;
    this.staleBefore = loaded.staleApprovals;
  }

  /** Ends the turn: `turn_end` once, then what was applied (`applied`: what to save; else the arrival). */
  end(parts: OutcomeParts, applied?: Omit<Applied, 'outcome'>): Applied {
    const { t } = this;
    this.over = true;
    const conflict = this.commits?.conflict;
    // A commit lost to another writer: nothing of this attempt is saved; the signal is applied again.
    const final =
      conflict === undefined ? withUnknownIds(parts, this.unknownIds) : { status: 'failed' as const, error: conflict };
    const { hub } = this.deps;
    if (hub.hasListeners)
      hub.emit({ type: 'turn_end', sessionKey: t.session.key, agentId: t.session.agent.id, status: final.status });
    const outcome = outcomeOf(t.session.ctx, final, t.action, t.match);
    if (conflict !== undefined) return { outcome, conflict };
    if (applied !== undefined) {
      const { save, rollback, transitions, stopQueued } = applied;
      return { outcome, save, rollback, transitions, stopQueued };
    }
    // After a commit, what arrived is saved already: a failure saves nothing more.
    return t.job.committed === true || t.arrival === undefined ? { outcome } : { outcome, save: t.arrival };
  }

  /** `ctx.commit`. */
  commit(state: unknown): Promise<void> {
    this.commits ??= new TurnCommits(this.deps.persistence, this.t, this.approvals, () => this.over);
    return this.commits.commit(state);
  }

  /** `ctx.emit`: the engine's own events (approval events with public ids). */
  emit(event: unknown): void {
    if (this.over) return;
    const { hub } = this.deps;
    const { session, job } = this.t;
    if (typeof event === 'object' && event !== null) {
      const record = (this.record ??= new TurnRecord());
      const summary = approvalSummaryOf(event);
      if (summary !== undefined) (record.approvals ??= []).push(summary);
      else record.note(event as Record<string, unknown>);
    }
    if (isApprovalEvent(event)) {
      const shown = publicApprovalEvent(event, this.toPublic);
      (this.announced ??= new AnnouncedApprovals()).note(shown);
      forwardEngineEvent(hub, session, shown, job.sink);
      return;
    }
    forwardEngineEvent(hub, session, event, job.sink);
  }

  /** `ctx.emitText` of a streamed turn. */
  emitText(sink: TurnSink, delta: unknown, source: TextSource | undefined): void {
    if (!this.over) forwardText(this.deps.hub, this.t.session, sink, delta, source);
  }
}

/** The error a stopped engine turn rejects with. @internal */
export const turnStopped = (): AbortedError => new AbortedError({ message: 'The turn was stopped' });

/**
 * The turn's engine raced with its job's stop: settles as the engine does, or rejects with
 * {@link turnStopped}'s error as soon as the stop fires. What a caller awaiting the turn in an
 * async frame awaits (the session queue's fast lane races it itself, with no promise of its own).
 * @internal
 */
export function raceEngine(turn: Turn): Promise<unknown> {
  return raceStop(turn.engineDone as Promise<unknown>, turn.t.job.stop, turnStopped);
}

/**
 * A `continue`: one engine turn, then its `TurnResult.actions`, all or nothing. Emits
 * `turn_start` / `turn_end` (when anyone listens) and the engine's own events as `engine_event`.
 * @internal
 */
export async function runTurn(deps: TurnDeps, t: TurnInput): Promise<Applied> {
  const turn = startTurn(deps, t);
  if (!(turn instanceof Turn)) return turn;
  let ok = true;
  let value: unknown;
  try {
    value = await raceEngine(turn);
  } catch (error) {
    ok = false;
    value = error;
  }
  return endTurn(turn, ok, value);
}

/**
 * The first half of {@link runTurn}, synchronous: the engine called, its turn's end in
 * `engineDone` (for the caller to await in its own frame, raced with the stop — {@link raceEngine}
 * — or to follow with callbacks: no async frame of its own), then {@link endTurn}. An `Applied` when the turn
 * ended before that (no pending approval named, the engine threw synchronously).
 * @internal
 */
export function startTurn(deps: TurnDeps, t: TurnInput): Applied | Turn {
  const { hub } = deps;
  const { session, job } = t;
  // The runner's own check: decisions naming no pending approval run nothing.
  if (decidesNothingPending(job.signal, t.loaded.pendingApprovals))
    return { outcome: outcomeOf(session.ctx, { status: 'rejected' }, NO_PENDING_APPROVAL, undefined) };
  const turn = new Turn(deps, t);
  const ctx = new TurnContextImpl(turn);
  if (hub.hasListeners) hub.emit({ type: 'turn_start', sessionKey: session.key, agentId: session.agent.id });
  try {
    const engine = session.agent.engine;
    if (engine === undefined)
      throw new RunnerError({ code: 'ENGINE_FAILED', message: `Agent "${session.agent.id}" has no engine` });
    // An engine may return a plain TurnResult as well as a promise of one.
    turn.engineDone = Promise.resolve(engine(ctx));
  } catch (error) {
    return engineFailed(turn, error);
  }
  return turn;
}

/** A turn whose engine threw (or was stopped: the stop's error): `stopped` when its stop fired, else `failed`. */
function engineFailed(turn: Turn, error: unknown): Applied {
  if (turn.t.job.stop.aborted) return turn.end({ status: 'stopped' });
  return turn.end({ status: 'failed', error: asSignalyardError(error, 'ENGINE_FAILED') });
}

/**
 * The second half of {@link runTurn}: the turn's end once its engine settled — `ok` with the
 * engine's `value`, else with what it threw (or the stop's error). Synchronous for a turn
 * without actions (most turns); may throw what escapes the turn's own handling (a strategy's
 * `snapshot()` throwing), as `runTurn` rejects with it.
 * @internal
 */
export function endTurn(turn: Turn, ok: boolean, value: unknown): Applied | Promise<Applied> {
  const { session, job } = turn.t;
  if (!ok) return engineFailed(turn, value);
  if (job.stop.aborted) return turn.end({ status: 'stopped' });
  let problem: string | undefined;
  try {
    problem = turnResultProblem(value);
  } catch (error) {
    problem = `a value that cannot be read (${errorText(error)})`; // a throwing getter, a hostile Proxy
  }
  if (problem !== undefined) {
    const message = `Engine of agent "${session.agent.id}" returned ${problem}`;
    return turn.end({ status: 'failed', error: new RunnerError({ code: 'TURN_RESULT_INVALID', message }) });
  }
  return applyTurnResult(turn, value ?? {});
}

function isApprovalEvent(event: unknown): event is { type: string } & Record<string, unknown> {
  if (typeof event !== 'object' || event === null) return false;
  const type = (event as { type?: unknown }).type;
  return type === 'approval_requested' || type === 'approval_resolved';
}

/**
 * Applies a valid `TurnResult`: its actions all or nothing, then what to save. Synchronous for a
 * turn without actions (most turns).
 */
function applyTurnResult(turn: Turn, result: TurnResult): Applied | Promise<Applied> {
  const before = turn.t.loaded.strategy.snapshot();
  const actions = result.actions ?? [];
  if (actions.length === 0) return turnApplied(turn, result, before, NO_ACTIONS);
  return applyTurnActions(turn.deps, turn.t, actions).then((applied) => turnApplied(turn, result, before, applied));
}

/** Nothing applied: no transitions, nothing stopped. */
const NO_ACTIONS: ActionsApplied = Object.freeze({ transitions: Object.freeze([]), stopQueued: false });

/** What a turn whose actions were applied (or refused: `applied`) saves. */
function turnApplied(turn: Turn, result: TurnResult, before: StrategySnapshot, applied: ActionsApplied): Applied {
  const { deps, t } = turn;
  const { strategy } = t.loaded;
  // A force_stop can land while a custom action handler runs.
  if (t.job.stop.aborted) {
    strategy.restore(before);
    return turn.end({ status: 'stopped' });
  }
  if ('refusal' in applied) {
    strategy.restore(before);
    return turn.end(applied.refusal);
  }
  const next =
    result.messages === undefined || result.messages.length === 0
      ? t.history
      : appendHistory(t.history, keptMessages(result.messages), deps.maxHistoryMessages);
  const engineState = Object.prototype.hasOwnProperty.call(result, 'state') ? result.state : t.loaded.engineState;
  const pending =
    result.pendingApprovals === undefined || result.pendingApprovals.length === 0
      ? NO_APPROVALS
      : publicPending(result.pendingApprovals, turn.toPublic);
  announceApprovals(turn, pending);
  const paused = pending.length > 0 || result.status === 'paused';
  const parts: { -readonly [K in keyof OutcomeParts]: OutcomeParts[K] } = { status: paused ? 'paused' : 'completed' };
  if ('output' in result) parts.output = result.output;
  if (pending.length > 0) parts.pendingApprovals = pending;
  return turn.end(parts, {
    save: {
      history: next,
      engineState,
      pendingApprovals: pending,
      staleApprovals: NO_APPROVALS,
      aliases: turn.aliases,
      record: turn.record,
      reply: replyOf(result.reply, result.messages),
    },
    rollback: before,
    transitions: applied.transitions,
    stopQueued: applied.stopQueued,
  });
}

/** Emits the approval events the turn implies and its engine did not emit itself. */
function announceApprovals(turn: Turn, after: readonly PendingApproval[]): void {
  const before = turn.pendingBefore;
  if (before.length === 0 && after.length === 0 && turn.approvals.length === 0) return;
  const events = impliedApprovalEvents(
    { before, stale: turn.staleBefore, after, decisions: turn.approvals },
    turn.announced ?? new AnnouncedApprovals(),
  );
  for (const event of events) forwardEngineEvent(turn.deps.hub, turn.t.session, event, turn.t.job.sink);
}

type ActionsApplied =
  | { readonly transitions: readonly TransitionResult[]; readonly stopQueued: boolean }
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

import { AbortedError, type Action, type Outcome, type Signal } from '@signalyard/core';
import type { Job, LiveSession } from './live-session.js';
import { asSignalyardError, failedOutcome, outcomeOf, stoppedOutcome } from './outcomes.js';
import { decide, userMessageDefault, type DecideDeps } from './route-decision.js';
import type { SessionPersistence } from './session-persistence.js';

/** What routing a signal on arrival works with. @internal */
export interface ArrivalDeps extends DecideDeps {
  readonly persistence: SessionPersistence;
  /** Resolves a job with its outcome (once) and emits `outcome`: the queue's `settle`. */
  readonly settle: (job: Job, outcome: Outcome) => void;
}

/**
 * How a stop routed on arrival ended: `settled` (it stopped its victims, or failed), or `queue`
 * (it was routed to another action, applied in order like any signal).
 * @internal
 */
export type ArrivalEnd = 'settled' | 'queue';

/**
 * A stop signal is routed on arrival ({@link decide}), without waiting behind the turn in flight.
 * It can only stop the work that existed when it arrived: `inFlight` (the turn running then) and
 * `victims` (the signals waiting then). `force_stop` aborts the turn in flight; `graceful_stop`
 * lets it finish; both settle the waiting victims `stopped`.
 * @internal
 */
export function stopOnArrival(
  d: ArrivalDeps,
  session: LiveSession,
  job: Job,
  victims: readonly Job[],
  inFlight: readonly Job[],
): ArrivalEnd {
  job.announced = true;
  d.hub.emit({ type: 'signal_received', ...session.ctx, signal: job.signal });
  const { state } = session;
  const decision = decide(d, session, job, state.kind === 'loaded' ? state : undefined);
  if (!decision.ok) {
    d.settle(job, failedOutcome(session.ctx, decision.error));
    return 'settled';
  }
  const { action, match } = decision;
  // Any other action (a stop's runner default is graceful_stop) is applied in order, like any signal.
  if (action === undefined || (action.type !== 'force_stop' && action.type !== 'graceful_stop')) return 'queue';
  const force = action.type === 'force_stop';
  if (force && session.batch !== undefined && inFlight.some((j) => session.isRunning(j)))
    session.batch.abort(new AbortedError({ message: 'force_stop' }));
  for (const victim of [...inFlight, ...victims]) {
    if (victim.settled) continue;
    // A victim that has started since the stop arrived is in flight now.
    if (session.isRunning(victim)) {
      if (force) victim.stop.abort(new AbortedError({ message: 'force_stop' }));
    } else {
      d.settle(victim, stoppedOutcome(session.ctx));
      if (job.entry !== undefined && victim.entry !== undefined) {
        (job.stopped ??= []).push(victim);
        victim.stoppedBy = job;
      }
    }
  }
  d.settle(job, outcomeOf(session.ctx, { action, match, status: 'completed' }));
  return 'settled';
}

/**
 * A stop for a session not loaded yet loads it first (sharing the worker's load); `false` when
 * the load failed (the stop is settled `failed`) or the stop was settled meanwhile.
 * @internal
 */
export async function loadForStop(d: ArrivalDeps, session: LiveSession, job: Job): Promise<boolean> {
  try {
    await d.persistence.loadShared(session);
  } catch (error) {
    d.settle(job, failedOutcome(session.ctx, asSignalyardError(error, 'CHECKPOINT_LOAD_FAILED')));
    return false;
  }
  return !job.settled;
}

/**
 * `whenBusy: 'interrupt'`: a user message routed to `continue` on arrival aborts the engine turn
 * of the user messages in flight (their callers get `stopped`); it is then applied in its place
 * in the queue, and messages arriving until its turn starts join it. No event: the message is
 * routed again, and reported, in its turn.
 * @internal
 */
export function interruptOnArrival(session: LiveSession, signal: Signal): void {
  const { state } = session;
  if (state.kind !== 'loaded') return;
  let action: Action;
  try {
    action = state.router.match(signal, session.ctx)?.action ?? userMessageDefault(state);
  } catch {
    return; // routing fails again in the message's turn, and is reported there
  }
  if (action.type !== 'continue') return;
  const interrupt = session.interruptTurn;
  session.interruptTurn = undefined;
  interrupt?.(new AbortedError({ message: 'Interrupted by a newer user message' }));
}

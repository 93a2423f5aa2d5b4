import { AbortedError, type Outcome, type SessionLock } from '@signalyard/core';
import { errorText, isAbortSignal, onAbort } from '@signalyard/core/internal';
import type { BatchApply, SignalApply } from './appliers.js';
import type { SignalApplied } from './signal-step.js';
import type { Batch } from './busy-batch.js';
import { RunnerError, type RunnerErrorCode } from './errors/runner-error.js';
import type { Job, LiveSession, Task } from './live-session.js';
import { asSignalyardError, failedOutcome, stoppedOutcome } from './outcomes.js';
import type { Stopper } from './stopper.js';

/**
 * Applies one signal inside the session's lock and says how it ended; a lock lost or not taken
 * is the signal's `SESSION_LOCK_FAILED`.
 * @internal
 */
export async function runLocked(
  applier: SignalApply,
  lock: SessionLock,
  session: LiveSession,
  job: Job,
): Promise<SignalApplied> {
  session.running = job;
  const held: LockWatch = { entered: false, lost: undefined };
  try {
    const applied = await lock.withLock(
      session.key,
      (lockSignal) =>
        underLock(
          held,
          lockSignal,
          (reason) => {
            job.lockLost = true; // another process may hold the session now: write nothing more
            job.stop.abort(reason);
          },
          () => applier.apply(session, job, true),
        ),
      { abortSignal: job.stop.signal },
    );
    // The lock lost before applying: reported as the lock's failure.
    if (held.lost !== undefined) return failed(failedOutcome(session.ctx, lockFailed(session, held, held.lost.reason)));
    return applied ?? failed(stoppedOutcome(session.ctx));
  } catch (error) {
    // The lock lost, or not taken for another reason than this signal's stop: the lock failed.
    const lockFailure = held.lost !== undefined || (!held.entered && !job.stop.aborted);
    return failed(
      lockFailure
        ? failedOutcome(session.ctx, lockFailed(session, held, error))
        : thrownOutcome(session, job.stop, error, 'SESSION_LOCK_FAILED'),
    );
  } finally {
    session.running = undefined;
  }
}

/**
 * Applies a batch of user messages (inside the session's lock, when there is one); returns the
 * outcome for the members it did not settle — `undefined`: they were stopped (the lock was lost
 * or not taken after a stop).
 * @internal
 */
export async function runBatch(
  applier: BatchApply,
  lock: SessionLock | undefined,
  batch: Batch,
  lead: Job,
): Promise<Outcome | undefined> {
  const { session } = batch;
  session.running = lead;
  session.batch = batch;
  const held: LockWatch = { entered: false, lost: undefined };
  try {
    if (lock === undefined) await applier.run(batch, false);
    else
      await lock.withLock(
        session.key,
        (lockSignal) =>
          underLock(
            held,
            lockSignal,
            (reason) => {
              batch.lockLost = true;
              batch.abort(reason);
            },
            () => applier.run(batch, true),
          ),
        { abortSignal: lead.stop.signal },
      );
    if (held.lost !== undefined) return failedOutcome(session.ctx, lockFailed(session, held, held.lost.reason));
    return undefined;
  } catch (error) {
    const lockFailure = lock !== undefined && (held.lost !== undefined || (!held.entered && !lead.stop.aborted));
    return lockFailure
      ? failedOutcome(session.ctx, lockFailed(session, held, error))
      : thrownOutcome(session, lead.stop, error, 'ENGINE_FAILED');
  } finally {
    session.running = undefined;
    session.batch = undefined;
  }
}

/** Runs a task in its turn (inside the session's lock, when there is one). @internal */
export async function runTask(lock: SessionLock | undefined, session: LiveSession, task: Task): Promise<void> {
  session.running = task;
  try {
    if (lock === undefined) await task.run(session);
    else await lock.withLock(session.key, () => task.run(session));
  } catch (error) {
    task.cancel(error); // a lock failure: the task did not run (run() settles its own errors)
  } finally {
    session.running = undefined;
  }
}

function failed(outcome: Outcome): SignalApplied {
  return { outcome, stopQueued: false };
}

/** What became of a session lock around one signal: whether `fn` ran, whether the lock was lost meanwhile. */
interface LockWatch {
  entered: boolean;
  lost: { readonly reason: unknown } | undefined;
}

/**
 * A lock's `fn`: applies the signal (or batch), and calls `lost` — which aborts the turn (its
 * effects are discarded) and writes nothing more — when the lock's `lockSignal` fires. A lock that
 * passes no signal is one that cannot lose its hold. When the lock is lost before `apply` starts,
 * it never runs (`undefined`: reported as the lock's failure).
 */
async function underLock<T>(
  held: LockWatch,
  lockSignal: unknown,
  lost: (reason: AbortedError) => void,
  apply: () => Promise<T>,
): Promise<T | undefined> {
  held.entered = true;
  if (!isAbortSignal(lockSignal)) return apply();
  const onLost = (): void => {
    held.lost ??= { reason: lockSignal.reason };
    lost(new AbortedError({ message: 'The session lock was lost', cause: lockSignal.reason }));
  };
  if (lockSignal.aborted) {
    onLost();
    return undefined;
  }
  const stopListening = onAbort(lockSignal, onLost);
  try {
    return await apply();
  } finally {
    stopListening();
  }
}

/** What a signal whose application threw ends as: `stopped` when its stop fired, else `failed` (`code` for a non-Signalyard error). @internal */
export function thrownOutcome(session: LiveSession, stop: Stopper, error: unknown, code: RunnerErrorCode): Outcome {
  return stop.aborted ? stoppedOutcome(session.ctx) : failedOutcome(session.ctx, asSignalyardError(error, code));
}

/** `SESSION_LOCK_FAILED`: the lock could not be taken, or was lost while the signal was applied; `error` is the cause. */
function lockFailed(session: LiveSession, held: LockWatch, error: unknown): RunnerError {
  if (RunnerError.isInstance(error) && error.code === 'SESSION_LOCK_FAILED') return error;
  const what =
    held.lost === undefined
      ? 'could not be taken'
      : 'was lost while a signal was applied (the turn was aborted and its effects discarded)';
  return new RunnerError({
    code: 'SESSION_LOCK_FAILED',
    message: `The session lock on ${JSON.stringify(session.key)} ${what}: ${errorText(error)}`,
    cause: error,
  });
}

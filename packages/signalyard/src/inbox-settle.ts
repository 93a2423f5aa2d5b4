import { InboxError, type Outcome } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import { appendHistory, userMessageOf } from './history.js';
import { entrySettled, markCommitted, skipSettled, withUnstored, type InboxMark } from './inbox-fields.js';
import type { Job, LiveSession } from './live-session.js';
import { failedOutcome, stoppedOutcome } from './outcomes.js';
import { signalCause } from './session-cause.js';
import { isConflict, type SessionPersistence } from './session-persistence.js';

/** Saves tried by {@link coverEntry} before it gives up (each conflict reloads). */
const COVER_TRIES = 4;

/**
 * Makes the session's checkpoint cover the entry `mark` (its `inboxSeq` at or above
 * `mark.seq`), saving a version that only advances `inboxSeq` — with the signal's user message
 * appended when `user` is set (a poisoned entry) — when it does not yet. A conflict reloads and
 * looks again: the entry is then settled by the other writer, or not.
 * @throws what the store throws on load or save (other than a conflict, retried).
 * @internal
 */
export async function coverEntry(
  persistence: SessionPersistence,
  maxHistoryMessages: number,
  session: LiveSession,
  job: Job,
  outcome: Outcome,
  mark: InboxMark,
  withUserMessage = false,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const loaded = await persistence.loadShared(session, attempt > 0);
    if (entrySettled(loaded.carried, mark)) return;
    const user = withUserMessage ? userMessageOf(job.signal) : undefined;
    const history = user === undefined ? loaded.history : appendHistory(loaded.history, user, maxHistoryMessages);
    try {
      await persistence.save(
        session,
        loaded,
        { history, engineState: loaded.engineState },
        signalCause(persistence.causes, job.signal, outcome),
        loaded.savedStrategy,
        // With the outcomes settled and not stored yet (a stop's victims, earlier entries'):
        // this save records them too.
        withUnstored(persistence.withOutcome(mark, outcome), session.unstoredOutcomes),
      );
      return;
    } catch (error) {
      if (!isConflict(error) || attempt + 1 >= COVER_TRIES) throw error;
    }
  }
}

/** True when the session's live state shows `entry` settled. @internal */
export function coveredLive(
  session: LiveSession | undefined,
  entry: { readonly seq: string; readonly receiptId: string },
): boolean {
  const state = session?.state;
  return state?.kind === 'loaded' && entrySettled(state.carried, entry);
}

/** What the gate of an entry's job needs. @internal */
export interface GateDeps {
  readonly persistence: SessionPersistence;
  readonly maxHistoryMessages: number;
  readonly maxDeliveries: number;
  /** `false` when the lease the entry was read under is lost (or the worker is closing). */
  readonly holds: (job: Job) => boolean;
  /** Whether the session must be reloaded first (the first entry under a new lease); clears it. */
  readonly fresh: (job: Job) => boolean;
  /** Counts the entry's delivery, durably (`Inbox.beginDelivery`). */
  readonly beginDelivery: (job: Job) => Promise<number>;
  /** The delivery was counted (`attempt`): its events are published under it (a redelivery's `restarted` first). Never throws. */
  readonly delivering: (job: Job, attempt: number) => void;
  /** The entry cannot be settled now (lease lost, store down): leave it to a later delivery. */
  readonly drop: (session: LiveSession, job: Job, why: unknown) => void;
  /** Resolves the job with its outcome (the queue's `settle`). */
  readonly settle: (job: Job, outcome: Outcome) => void;
}

/**
 * Before an entry's job runs, on the lease holder: counts the delivery, acknowledges entries the
 * checkpoint settled already, poisons an entry delivered more than `maxDeliveries` times (its user
 * message saved, `inboxSeq` advanced, `failed` with `INBOX_POISONED`, no engine), and marks an
 * entry whose turn committed before (`inboxPartial`) so its user message is not appended again.
 * `false` when it settled (or dropped) the job itself.
 * @internal
 */
export async function gateEntry(d: GateDeps, session: LiveSession, job: Job): Promise<boolean> {
  if (job.entry === undefined) return true;
  let carried: Readonly<Record<string, unknown>>;
  try {
    const attempts = await count(d, session, job);
    if (attempts === undefined) return false;
    carried = (await d.persistence.loadShared(session, d.fresh(job))).carried;
  } catch (error) {
    d.drop(session, job, error);
    return false;
  }
  const end = admitCounted(d, session, job, carried);
  if (end === 'giveBack') return poison(d, session, job, job.attempts ?? 0);
  return end === 'run';
}

/**
 * The gate of a member taken into a batch (`whenBusy` collect / interrupt) with an entry, on the
 * batch's loaded state (`carried`): its delivery counted before the batch's engine runs, `settled`
 * when settled before (or dropped), `giveBack` when it must be poisoned (applied on its own, as the
 * next job: its delivery is not counted again).
 * @internal
 */
export async function admitMember(
  d: GateDeps,
  session: LiveSession,
  job: Job,
  carried: Readonly<Record<string, unknown>>,
): Promise<'run' | 'settled' | 'giveBack'> {
  try {
    if ((await count(d, session, job)) === undefined) return 'settled';
  } catch (error) {
    d.drop(session, job, error);
    return 'settled';
  }
  return admitCounted(d, session, job, carried);
}

/** Counts the entry's delivery once (`undefined`: dropped, the lease is lost); its events are published under the count. */
async function count(d: GateDeps, session: LiveSession, job: Job): Promise<number | undefined> {
  if (!d.holds(job)) {
    d.drop(session, job, 'the lease is lost');
    return undefined;
  }
  if (job.attempts !== undefined) return job.attempts;
  const attempts = await d.beginDelivery(job);
  job.attempts = attempts;
  d.delivering(job, attempts);
  return attempts;
}

/** After the count: skips an entry settled already, marks a committed one, says whether to poison. */
function admitCounted(
  d: GateDeps,
  session: LiveSession,
  job: Job,
  carried: Readonly<Record<string, unknown>>,
): 'run' | 'settled' | 'giveBack' {
  const entry = job.entry as NonNullable<Job['entry']>;
  job.receiptId = entry.receiptId;
  if (entrySettled(carried, entry)) {
    skipSettled(session, job, entry, carried);
    d.settle(job, stoppedOutcome(session.ctx));
    return 'settled';
  }
  markCommitted(session, job);
  return (job.attempts ?? 0) > d.maxDeliveries ? 'giveBack' : 'run';
}

async function poison(d: GateDeps, session: LiveSession, job: Job, attempts: number): Promise<false> {
  const entry = job.entry as NonNullable<Job['entry']>;
  const error = new InboxError({
    code: 'INBOX_POISONED',
    message: `Entry ${JSON.stringify(entry.receiptId)} (seq ${entry.seq}) of session ${JSON.stringify(session.key)} was delivered ${attempts} times without being settled (maxDeliveries ${d.maxDeliveries}): settled failed without running the engine`,
    sessionKey: session.key,
    receiptId: entry.receiptId,
  });
  const outcome = failedOutcome(session.ctx, error);
  const mark = { seq: entry.seq, receiptId: entry.receiptId, partial: false };
  try {
    await coverEntry(d.persistence, d.maxHistoryMessages, session, job, outcome, mark, job.committed !== true);
  } catch (cause) {
    d.drop(session, job, cause);
    return false;
  }
  d.settle(job, outcome);
  return false;
}

/** The message of a drop's reason. @internal */
function dropText(why: unknown): string {
  return typeof why === 'string' ? why : errorText(why);
}

/** `LEASE_LOST` for the turn aborted (or the entry dropped) because of `why`. @internal */
export function lostError(key: string, why: unknown): InboxError {
  if (InboxError.isInstance(why) && why.code === 'LEASE_LOST') return why;
  return new InboxError({
    code: 'LEASE_LOST',
    message: `The lease on session ${JSON.stringify(key)} is lost (${dropText(why)}): the turn is aborted and nothing more is saved; another worker settles its entries`,
    sessionKey: key,
    ...(typeof why === 'string' ? {} : { cause: why }),
  });
}

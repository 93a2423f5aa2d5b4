import { InboxError, type Inbox, type InboxEntry, type Outcome, type OutcomeJson } from '@signalyard/core';
import { entrySettled, settledOutcomeIn } from './inbox-fields.js';
import type { LiveSession } from './live-session.js';
import { failedOutcome, outcomeOf } from './outcomes.js';
import type { SessionPersistence } from './session-persistence.js';
import type { SessionTimeline } from './session-timeline.js';
import { viewOf, type SessionView } from './session-view.js';

/** The signal kind of a control entry's signal (its payload: the control's arguments). @internal */
export const CONTROL_KIND = 'custom:signalyard.control';

/** How a control entry's application ended: applied (with its outcome), settled before, or left (lease lost). @internal */
export type ControlEnd =
  | { readonly kind: 'applied'; readonly outcome: Outcome }
  | { readonly kind: 'skipped'; readonly recorded: OutcomeJson | undefined }
  | { readonly kind: 'left' };

/** What applying a control entry works with. @internal */
export interface ControlDeps {
  readonly persistence: SessionPersistence;
  readonly timeline: SessionTimeline;
}

/** What the worker lends a control entry's application. @internal */
export interface ControlHooks {
  /** `false` once the lease the entry was read under is lost (or the worker is closing). */
  readonly holds: () => boolean;
  /** Before a delete: acknowledges the entries of the key below it, their outcomes stored first. */
  readonly sweep: () => Promise<void>;
  /**
   * Before a delete: the outcome an earlier delivery of it stored, if any — it applied the delete
   * then, and its acknowledgement was lost. `undefined`: not applied before (as far as is known).
   */
  readonly appliedBefore: () => Promise<OutcomeJson | undefined>;
}

/**
 * Applies a control entry (`rewind`, `delete`) in the session's turn in its queue, on the lease
 * holder: skipped when the checkpoint settled it already; a rewind records the entry's `seq` and
 * its own outcome in its save; a failure (a version not kept, no session) is the entry's `failed`
 * outcome.
 *
 * A delete removes the checkpoint, and with it `inboxSeq`: nothing would then tell an earlier
 * entry redelivered (its ack lost) as settled. So before deleting, `sweep` acknowledges every
 * entry of the key still in the inbox below the delete's `seq` (all applied already: entries are
 * applied in `seq` order), storing their outcomes first; when it fails, nothing is deleted and
 * the entry is left to a later delivery. Once the checkpoint is gone no entry at or below the
 * delete's `seq` is left in the inbox but the delete itself — whichever worker runs next. Nor does
 * the delete itself tell, once applied, that it was: a delete redelivered after its outcome was
 * stored (its acknowledgement lost) is settled with that outcome and deletes nothing again — the
 * key may hold a new session by then (a fork into it).
 * @internal
 */
export async function applyControl(
  d: ControlDeps,
  session: LiveSession,
  entry: InboxEntry,
  hooks: ControlHooks,
): Promise<ControlEnd> {
  if (!hooks.holds()) return { kind: 'left' };
  try {
    const loaded = await d.persistence.loadShared(session, true);
    if (entrySettled(loaded.carried, entry))
      return { kind: 'skipped', recorded: settledOutcomeIn(loaded.carried, entry.receiptId) };
  } catch {
    return { kind: 'left' };
  }
  try {
    if (entry.control === 'rewind') return await rewind(d, session, entry);
    try {
      const before = await hooks.appliedBefore();
      if (before !== undefined) return { kind: 'skipped', recorded: before };
      await hooks.sweep();
    } catch {
      return { kind: 'left' };
    }
    if (!hooks.holds()) return { kind: 'left' };
    await d.timeline.deleteNow(session);
    return { kind: 'applied', outcome: outcomeOf(session.ctx, { status: 'completed' }) };
  } catch (error) {
    return { kind: 'applied', outcome: failedOutcome(session.ctx, error) };
  }
}

/** A rewind entry: its save settles the entry's `seq` and records the outcome it is answered with. */
async function rewind(d: ControlDeps, session: LiveSession, entry: InboxEntry): Promise<ControlEnd> {
  const args = (entry.signal.payload ?? {}) as { version?: unknown; reissueApprovals?: unknown };
  const answer = (view: SessionView): Outcome => outcomeOf(session.ctx, { status: 'completed', output: view });
  const mark = { seq: entry.seq, receiptId: entry.receiptId, partial: false };
  const view = await d.timeline.rewindNow(session, args.version, {
    reissueApprovals: args.reissueApprovals === true,
    settles: entry.seq,
    records: (version, data) => {
      const live = { busy: false, queued: session.queued };
      return d.persistence.withOutcome(mark, answer(viewOf(session.key, version, data, live))).outcomes?.[0];
    },
  });
  return { kind: 'applied', outcome: answer(view) };
}

/**
 * The outcome an earlier delivery of a delete entry stored (it applied the delete, then its ack
 * was lost): counts this delivery durably, and on a redelivery looks the outcome up, waiting at
 * most `waitMs` for one (a transport may answer a lookup by a round trip).
 * @internal
 */
export async function appliedBefore(inbox: Inbox, entry: InboxEntry, waitMs: number): Promise<OutcomeJson | undefined> {
  if ((await inbox.beginDelivery(entry)) <= 1) return undefined;
  try {
    return await inbox.outcome(entry.receiptId, { timeoutMs: waitMs });
  } catch (error) {
    if (InboxError.isInstance(error) && error.code === 'OUTCOME_TIMEOUT') return undefined;
    throw error;
  }
}

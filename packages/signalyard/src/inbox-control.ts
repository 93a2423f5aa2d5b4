import type { InboxEntry, Outcome, OutcomeJson } from '@signalyard/core';
import { settledOutcomeIn, settledThrough } from './inbox-fields.js';
import type { LiveSession } from './live-session.js';
import { failedOutcome, outcomeOf } from './outcomes.js';
import type { SessionPersistence } from './session-persistence.js';
import type { SessionTimeline } from './session-timeline.js';

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

/**
 * Applies a control entry (`rewind`, `delete`) in the session's turn in its queue, on the lease
 * holder: skipped when the checkpoint settled it already; a rewind records the entry's `seq` in
 * its own save; a failure (a version not kept, no session) is the entry's `failed` outcome.
 *
 * A delete removes the checkpoint, and with it `inboxSeq`: nothing would then tell an earlier
 * entry redelivered (its ack lost) as settled. So before deleting, `sweep` acknowledges every
 * entry of the key still in the inbox below the delete's `seq` (all applied already: entries are
 * applied in `seq` order), storing their outcomes first; when it fails, nothing is deleted and
 * the entry is left to a later delivery. Once the checkpoint is gone no entry at or below the
 * delete's `seq` is left in the inbox but the delete itself — whichever worker runs next.
 * @internal
 */
export async function applyControl(
  d: ControlDeps,
  session: LiveSession,
  entry: InboxEntry,
  holds: () => boolean,
  sweep: () => Promise<void> = () => Promise.resolve(),
): Promise<ControlEnd> {
  if (!holds()) return { kind: 'left' };
  try {
    const loaded = await d.persistence.loadShared(session, true);
    if (settledThrough(loaded.carried, entry.seq))
      return { kind: 'skipped', recorded: settledOutcomeIn(loaded.carried, entry.receiptId) };
  } catch {
    return { kind: 'left' };
  }
  const args = (entry.signal.payload ?? {}) as { version?: unknown; reissueApprovals?: unknown };
  try {
    if (entry.control === 'rewind') {
      const reopen = { reissueApprovals: args.reissueApprovals === true, settles: entry.seq };
      const view = await d.timeline.rewindNow(session, args.version, reopen);
      return { kind: 'applied', outcome: outcomeOf(session.ctx, { status: 'completed', output: view }) };
    }
    try {
      await sweep();
    } catch {
      return { kind: 'left' };
    }
    if (!holds()) return { kind: 'left' };
    await d.timeline.deleteNow(session);
    return { kind: 'applied', outcome: outcomeOf(session.ctx, { status: 'completed' }) };
  } catch (error) {
    return { kind: 'applied', outcome: failedOutcome(session.ctx, error) };
  }
}

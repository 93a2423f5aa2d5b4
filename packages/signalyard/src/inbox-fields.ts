import { outcomeToJson, type Outcome, type OutcomeJson, type SessionCheckpointV1 } from '@signalyard/core';
import { compareInboxSeq, isInboxSeq } from '@signalyard/core/internal';
import type { Job, LiveSession } from './live-session.js';

/**
 * What a save records of the inbox entry it settles: `partial: false` (the settling save) sets
 * `inboxSeq` to `seq` (never lowering it) and clears `inboxPartial`; `partial: true` (a mid-turn
 * `ctx.commit`) records `inboxPartial: { seq, receiptId }`.
 * @internal
 */
export interface InboxMark {
  readonly seq: string;
  readonly receiptId: string;
  readonly partial: boolean;
  /**
   * The outcomes of the entries a settling save settles, recorded as the checkpoint's
   * `inboxOutcomes` (replacing the last settle's); absent: none recorded.
   */
  readonly outcomes?: SessionCheckpointV1['inboxOutcomes'];
}

/**
 * `mark` (a settling one) with the outcome of its entry, as `putOutcome` stores it (capped at
 * `maxOutcomeBytes`); `mark` as it is when the outcome cannot be converted, or for a commit.
 * @internal
 */
export function withOutcome(mark: InboxMark, outcome: Outcome, maxOutcomeBytes: number): InboxMark {
  if (mark.partial) return mark;
  let json: OutcomeJson;
  try {
    json = outcomeToJson(outcome, { maxOutcomeBytes });
  } catch {
    return mark;
  }
  return { ...mark, outcomes: [{ receiptId: mark.receiptId, seq: mark.seq, outcome: json }] };
}

/** The outcome the checkpoint's last settling save recorded for `receiptId` (`inboxOutcomes`), if any. @internal */
export function settledOutcomeIn(
  fields: Readonly<Record<string, unknown>>,
  receiptId: string,
): OutcomeJson | undefined {
  const recorded: unknown = fields.inboxOutcomes;
  if (!Array.isArray(recorded)) return undefined;
  for (const item of recorded as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { receiptId: id, outcome } = item as { receiptId?: unknown; outcome?: unknown };
    if (id === receiptId && typeof outcome === 'object' && outcome !== null) return outcome as OutcomeJson;
  }
  return undefined;
}

/**
 * The mark of what `session` is settling now: the signal running (its entry), or the batch
 * running (its member with the highest `seq` among those applied so far, `members[0..through]`:
 * never one whose user message is not in the save yet); `undefined` on the in-process path.
 * @internal
 */
export function settlingMark(session: LiveSession): InboxMark | undefined {
  const { batch } = session;
  if (batch !== undefined) return highestMark(batch.members, batch.through);
  const running = session.running;
  if (running?.kind !== 'signal' || running.entry === undefined) return undefined;
  return { seq: running.entry.seq, receiptId: running.entry.receiptId, partial: false };
}

/** The settling mark of the member with the highest `seq` among `jobs[0..through]` (`undefined`: none has an entry). */
function highestMark(jobs: readonly Job[], through: number, partial = false): InboxMark | undefined {
  let best: Job['entry'];
  for (let i = 0; i <= through && i < jobs.length; i++) {
    const { entry } = jobs[i] as Job;
    if (entry !== undefined && (best === undefined || compareInboxSeq(entry.seq, best.seq) > 0)) best = entry;
  }
  return best === undefined ? undefined : { seq: best.seq, receiptId: best.receiptId, partial };
}

/** The `inboxSeq` among a checkpoint's top-level fields, when it has a well-formed one. */
function inboxSeqIn(fields: Readonly<Record<string, unknown>>): string | undefined {
  const seq = fields.inboxSeq;
  return isInboxSeq(seq) ? seq : undefined;
}

/** The `inboxPartial` among a checkpoint's top-level fields, when it has a well-formed one. @internal */
function inboxPartialIn(
  fields: Readonly<Record<string, unknown>>,
): { readonly seq: string; readonly receiptId: string } | undefined {
  const partial: unknown = fields.inboxPartial;
  if (typeof partial !== 'object' || partial === null) return undefined;
  const { seq, receiptId } = partial as { seq?: unknown; receiptId?: unknown };
  return isInboxSeq(seq) && typeof receiptId === 'string' ? { seq, receiptId } : undefined;
}

/** True when a checkpoint with these top-level fields has settled the entry `seq` already. @internal */
export function settledThrough(fields: Readonly<Record<string, unknown>>, seq: string): boolean {
  const done = inboxSeqIn(fields);
  return done !== undefined && compareInboxSeq(seq, done) <= 0;
}

/**
 * The carried (non-runner) top-level fields after a save with `mark`: the settling save sets
 * `inboxSeq` (the higher of the stored one and `mark.seq`), drops `inboxPartial`, and replaces
 * `inboxOutcomes` with `mark.outcomes` (dropped when there are none); a commit sets `inboxPartial`.
 * @internal
 */
export function carriedWithMark(
  carried: Readonly<Record<string, unknown>>,
  mark: InboxMark,
): Readonly<Record<string, unknown>> {
  if (mark.partial) return { ...carried, inboxPartial: { seq: mark.seq, receiptId: mark.receiptId } };
  const done = inboxSeqIn(carried);
  const inboxSeq = done !== undefined && compareInboxSeq(done, mark.seq) > 0 ? done : mark.seq;
  const { inboxPartial: _partial, inboxOutcomes: _outcomes, ...rest } = carried;
  const outcomes = mark.outcomes;
  return outcomes === undefined || outcomes.length === 0
    ? { ...rest, inboxSeq }
    : { ...rest, inboxSeq, inboxOutcomes: outcomes };
}

/**
 * Marks an inbox entry's job `committed` when the session's checkpoint holds a commit of its turn
 * (`inboxPartial` at or above its `seq`): its user message is saved already, never appended again.
 * @internal
 */
export function markCommitted(session: LiveSession, job: Job): void {
  const { state } = session;
  if (job.entry === undefined || state.kind !== 'loaded') return;
  const partial = inboxPartialIn(state.carried);
  if (partial !== undefined && compareInboxSeq(job.entry.seq, partial.seq) <= 0) job.committed = true;
}

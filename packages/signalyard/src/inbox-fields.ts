import type { Outcome, OutcomeJson, SessionCheckpointV1 } from '@signalyard/core';
import { compareInboxSeq, isInboxSeq, outcomeJsonOnce } from '@signalyard/core/internal';
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
   * A settling save of a batch member applied on its own while merged members before it wait
   * for their turn (their messages are in the save, their answer is not): `inboxSeq` advances
   * only to `settledSeq` (the highest entry before the first waiting member; `undefined`: not at
   * all), `seq`/`receiptId` — the member's own entry — are recorded as `inboxPartial` (the messages
   * through it are saved), and the outcomes record the member applied on its own, so a redelivery
   * answers the waiting members without applying it again ({@link entrySettled}).
   */
  readonly ahead?: { readonly settledSeq: string | undefined };
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
    json = outcomeJsonOnce(outcome, maxOutcomeBytes);
  } catch {
    return mark;
  }
  return { ...mark, outcomes: [{ receiptId: mark.receiptId, seq: mark.seq, outcome: json }] };
}

/** At most this many members of a batch get their outcome recorded by its settling save (the highest `seq`s). */
const MAX_RECORDED_MEMBERS = 64;

/**
 * `mark` (a batch's settling one) with an outcome recorded for each member of `jobs[0..through]`
 * with an entry, so that a worker that meets one of them settled already (this worker died before
 * `putOutcome`) stores the outcome that member got: `own(job)` — the one it was settled with, or
 * the merged turn's `outcome` with its own action, route and `mergedWith` — else `outcome`. A
 * member found settled before (skipped) keeps what an earlier save recorded for it, and the merged
 * members still `waiting` for their turn get none. `mark` as it is for a commit, or when an outcome
 * cannot be converted.
 * @internal
 */
export function withBatchOutcomes(
  mark: InboxMark,
  jobs: readonly Job[],
  through: number,
  outcome: Outcome,
  maxOutcomeBytes: number,
  own: (job: Job) => Outcome | undefined = () => undefined,
  waiting: readonly Job[] = [],
): InboxMark {
  if (mark.partial) return mark;
  const outcomes: { receiptId: string; seq: string; outcome: OutcomeJson }[] = [];
  try {
    for (let i = 0; i <= through && i < jobs.length; i++) {
      const job = jobs[i] as Job;
      if (job.entry === undefined || job.skipped === true || waiting.includes(job)) continue;
      // outcomeJsonOnce converts the batch's shared outcome once, however many members settle with it.
      const json = outcomeJsonOnce(own(job) ?? outcome, maxOutcomeBytes);
      outcomes.push({ receiptId: job.entry.receiptId, seq: job.entry.seq, outcome: json });
    }
  } catch {
    return mark;
  }
  return { ...mark, outcomes: outcomes.slice(-MAX_RECORDED_MEMBERS) };
}

/**
 * `mark` (a settling one) with, before its own, the outcomes the worker settled and has not
 * stored yet (`putOutcome` pending: `unstored`), so that the save records them too.
 * @internal
 */
export function withUnstored(mark: InboxMark, unstored: ReadonlyMap<string, RecordedOutcome> | undefined): InboxMark {
  if (mark.partial || unstored === undefined || unstored.size === 0) return mark;
  const own = mark.outcomes ?? [];
  const ids = new Set(own.map((o) => o.receiptId));
  const waiting = [...unstored.values()].filter((o) => !ids.has(o.receiptId));
  return waiting.length === 0 ? mark : { ...mark, outcomes: [...waiting, ...own] };
}

/**
 * Keeps `settled`, the outcome of `entry`, on `live` until `putOutcome` stored it
 * (`LiveSession.unstoredOutcomes`): entries are finished one after another while the session's
 * next entries are already applied and saved, and each of those saves records it.
 * @internal
 */
export function keepUnstored(
  live: LiveSession | undefined,
  entry: { readonly receiptId: string; readonly seq: string },
  settled: Outcome,
  maxOutcomeBytes: number,
): void {
  if (live === undefined) return;
  let json: OutcomeJson;
  try {
    json = outcomeJsonOnce(settled, maxOutcomeBytes);
  } catch {
    return;
  }
  keepRecorded(live, entry, json);
}

/**
 * Keeps `recorded`, the outcome an earlier settling save recorded for `entry` (found settled, so
 * skipped: {@link skipSettled}), on `live` until `ackSettled` stored it — as {@link keepUnstored}
 * does for an outcome this worker settled. Without it, the saves this worker makes meanwhile
 * (the session's next entries) would push it out of `inboxOutcomes` (it keeps the latest 8) while
 * its `putOutcome` is still pending: a crash then would leave the entry acknowledged by the next
 * worker with no outcome ever stored.
 * @internal
 */
export function keepRecorded(
  live: LiveSession | undefined,
  entry: { readonly receiptId: string; readonly seq: string },
  recorded: OutcomeJson | undefined,
): void {
  if (live === undefined || recorded === undefined) return;
  (live.unstoredOutcomes ??= new Map()).set(entry.receiptId, {
    receiptId: entry.receiptId,
    seq: entry.seq,
    outcome: recorded,
  });
}

/** How many receipt ids a session keeps as stored ({@link markStored}): more than a save keeps outcomes of. */
const KEPT_STORED = 32;

/**
 * Notes that the outcome of `receiptId` (an entry of `live`'s session) is stored: later saves
 * need not record it (not among the unstored ones, nor carried on from the checkpoint's
 * `inboxOutcomes`: {@link carriedWithMark}). Only the latest {@link KEPT_STORED} are noted; an
 * outcome forgotten here is carried on as before (within the kept window), never lost.
 * @internal
 */
export function markStored(live: LiveSession | undefined, receiptId: string): void {
  if (live === undefined) return;
  live.unstoredOutcomes?.delete(receiptId);
  const stored = (live.storedOutcomes ??= new Set());
  stored.add(receiptId);
  if (stored.size > KEPT_STORED) stored.delete(stored.values().next().value as string);
}

/**
 * Marks `job` (its entry settled already by the checkpoint's `carried` fields) skipped, with the
 * outcome the settling save recorded for it, kept on `session` until stored ({@link keepRecorded}).
 * @internal
 */
export function skipSettled(
  session: LiveSession,
  job: Job,
  entry: { readonly receiptId: string; readonly seq: string },
  carried: Readonly<Record<string, unknown>>,
): void {
  job.skipped = true;
  job.recorded = settledOutcomeIn(carried, entry.receiptId);
  keepRecorded(session, entry, job.recorded);
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
  if (batch !== undefined) {
    const own = highestMark(batch.members, batch.through);
    const waiting = batch.waiting;
    if (own === undefined || waiting === undefined || waiting.length === 0) return own;
    // Merged members before the member saved now wait for their turn: settle only what precedes them.
    const first = Math.min(...waiting.map((job) => batch.members.indexOf(job)));
    return { ...own, ahead: { settledSeq: highestMark(batch.members, first - 1)?.seq } };
  }
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
 * True when a checkpoint with these top-level fields has settled `entry` already: at or below
 * `inboxSeq`, or — a batch member applied on its own ahead of merged members that wait for their
 * turn ({@link InboxMark.ahead}) — at or below `inboxPartial` with its outcome recorded.
 * @internal
 */
export function entrySettled(
  fields: Readonly<Record<string, unknown>>,
  entry: { readonly seq: string; readonly receiptId: string },
): boolean {
  if (settledThrough(fields, entry.seq)) return true;
  const partial = inboxPartialIn(fields);
  return (
    partial !== undefined &&
    compareInboxSeq(entry.seq, partial.seq) <= 0 &&
    settledOutcomeIn(fields, entry.receiptId) !== undefined
  );
}

/**
 * The carried (non-runner) top-level fields after a save with `mark`: the settling save sets
 * `inboxSeq` (the higher of the stored one and `mark.seq`), drops `inboxPartial`, and records
 * `mark.outcomes` in `inboxOutcomes` beside the latest ones before ({@link recentOutcomes}) whose
 * outcome is not known `stored` ({@link markStored}); a commit sets `inboxPartial`.
 * @internal
 */
export function carriedWithMark(
  carried: Readonly<Record<string, unknown>>,
  mark: InboxMark,
  stored?: ReadonlySet<string>,
): Readonly<Record<string, unknown>> {
  if (mark.partial) return { ...carried, inboxPartial: { seq: mark.seq, receiptId: mark.receiptId } };
  const done = inboxSeqIn(carried);
  const upTo = mark.ahead === undefined ? mark.seq : mark.ahead.settledSeq;
  const inboxSeq = upTo === undefined || (done !== undefined && compareInboxSeq(done, upTo) > 0) ? done : upTo;
  const { inboxPartial: _partial, inboxOutcomes: previous, inboxSeq: _seq, ...rest } = carried;
  const outcomes = recentOutcomes(previous, mark.outcomes ?? [], inboxSeq, stored);
  return {
    ...rest,
    ...(inboxSeq !== undefined && { inboxSeq }),
    ...(mark.ahead !== undefined && { inboxPartial: { seq: mark.seq, receiptId: mark.receiptId } }),
    ...(outcomes.length > 0 && { inboxOutcomes: outcomes }),
  };
}

/** How many settled entries' outcomes a checkpoint keeps (`inboxOutcomes`): this save's, then the latest before. */
const KEPT_OUTCOMES = 8;
/** The JSON size the outcomes kept from earlier saves may take at most (this save's are always kept). */
const KEPT_OUTCOME_BYTES = 64 * 1024;

/** One outcome a settling save records (`inboxOutcomes`). @internal */
export type RecordedOutcome = NonNullable<SessionCheckpointV1['inboxOutcomes']>[number];

/**
 * The outcomes a settling save records: its own (`fresh`), then — newest first, up to
 * {@link KEPT_OUTCOMES} in all and {@link KEPT_OUTCOME_BYTES} of JSON — those the saves before it
 * recorded. A worker stores an entry's outcome after the settling save, while the session's next
 * entries are already being applied: a crash can come after later saves, so the outcome of an
 * entry whose `putOutcome` never ran must outlive the next save or two. An outcome known stored
 * (`stored`) is not carried on: a worker meeting its entry again finds it in the store (steady
 * state: one or two outcomes per checkpoint instead of 8, a checkpoint small enough not to be
 * compressed by the database).
 */
function recentOutcomes(
  previous: unknown,
  fresh: readonly RecordedOutcome[],
  inboxSeq: string | undefined,
  stored: ReadonlySet<string> | undefined,
): RecordedOutcome[] {
  if (!Array.isArray(previous)) return [...fresh];
  const older: RecordedOutcome[] = []; // newest first
  let bytes = 0;
  let full = false;
  for (let i = previous.length - 1; i >= 0; i--) {
    const item = previous[i] as Partial<RecordedOutcome> | null;
    if (
      typeof item !== 'object' ||
      item === null ||
      typeof item.receiptId !== 'string' ||
      isFresh(fresh, item.receiptId)
    ) {
      continue;
    }
    // The outcome of an entry settled ahead of `inboxSeq` (InboxMark.ahead) is what marks it
    // settled: kept until `inboxSeq` covers it, whatever the limits.
    const ahead = isInboxSeq(item.seq) && (inboxSeq === undefined || compareInboxSeq(item.seq, inboxSeq) > 0);
    if (!ahead) {
      // Stored already (this process saw its settle or putOutcome resolve): the store answers for it.
      if (stored?.has(item.receiptId) === true) continue;
      if (full || older.length + fresh.length >= KEPT_OUTCOMES) continue;
      bytes += jsonLength(item);
      if (bytes > KEPT_OUTCOME_BYTES) {
        full = true;
        continue;
      }
    }
    older.push(item as RecordedOutcome);
  }
  return [...older.reverse(), ...fresh];
}

/** Whether `receiptId` is among `fresh` (one outcome, or a batch's few). */
function isFresh(fresh: readonly RecordedOutcome[], receiptId: string): boolean {
  for (const o of fresh) if (o.receiptId === receiptId) return true;
  return false;
}

/** The JSON length of recorded outcomes seen before: a session's saves carry the same objects on, save after save. */
const jsonLengths = new WeakMap<object, number>();

function jsonLength(item: object): number {
  let length = jsonLengths.get(item);
  if (length === undefined) {
    length = JSON.stringify(item).length;
    jsonLengths.set(item, length);
  }
  return length;
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

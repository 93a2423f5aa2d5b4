import type { Action, Outcome, SessionCause } from '@signalyard/core';
import type { RouteMatch } from '@signalyard/router';
import type { Job, LiveSession, RunningBatch } from './live-session.js';
import { markCommitted } from './inbox-fields.js';
import { stoppedOutcome } from './outcomes.js';
import { Stopper } from './stopper.js';

/** A user message of a batch routed to `continue`: it waits for the batch's one engine turn. @internal */
export interface MergedMember {
  readonly job: Job;
  readonly action: Action;
  readonly match: RouteMatch | undefined;
}

/**
 * How a member taken with an inbox entry is admitted: `run` (apply it), `settled` (the admission
 * settled it: settled before, or dropped), `giveBack` (it must be applied on its own: poisoned).
 * @internal
 */
export type MemberAdmit = (
  job: Job,
  carried: Readonly<Record<string, unknown>>,
) => Promise<'run' | 'settled' | 'giveBack'>;

/**
 * The user messages of a session applied together (`whenBusy` collect / interrupt): the lead
 * message, and every `user_message` taken from the head of the queue after it until the batch's
 * engine turn starts. Aborting the batch (a force_stop, a `close()` timeout, an interrupting
 * message, a lost lock) stops its turn and every member; one caller's own abort stops only its
 * member (the turn goes on for the others, and stops when no member is left).
 * @internal
 */
export class Batch implements RunningBatch {
  readonly session: LiveSession;
  /** Every job taken into the batch, in arrival order. */
  readonly members: Job[];
  /** The index in `members` of the member being applied now (see {@link RunningBatch.through}). */
  through = 0;
  /** See {@link RunningBatch.waiting}. */
  waiting: readonly Job[] | undefined;
  /** Members whose user message is in the stored history (never appended again after a reload). */
  readonly saved = new Set<Job>();
  /** Stops the batch's engine turn. */
  readonly turnStop = new Stopper();
  /** The members of the current pass routed to `continue`. */
  merged: MergedMember[] = [];
  /** Set once the batch is aborted as a whole. */
  aborting = false;
  /** No more messages join (a stop action was applied, or the batch was aborted). */
  closed = false;
  /** The session lock was lost: nothing more may be written. */
  lockLost = false;
  /** Whether the engine turn runs now. */
  turnRunning = false;
  /** Fires when a newer user message interrupts the batch's turn (`whenBusy: 'interrupt'`). */
  readonly #interrupt = new AbortController();
  /** Set once a newer user message interrupted the batch's turn. */
  interrupted = false;
  readonly #settle: (job: Job, outcome: Outcome, cause?: SessionCause) => void;
  /** The outcomes members were settled with (see {@link Batch.memberOutcome}). */
  readonly #settledWith = new Map<Job, Outcome>();
  /** While the merged turn's save runs: a merged member's own outcome, made from the turn's. */
  mergedOutcome: ((job: Job, shared: Outcome) => Outcome | undefined) | undefined;
  /**
   * With a durable inbox: admits a member taken with an entry before it is applied (its delivery
   * counted durably, an entry settled already skipped, a poisoned one given back).
   */
  readonly admit: MemberAdmit | undefined;

  constructor(
    session: LiveSession,
    lead: Job,
    settle: (job: Job, outcome: Outcome, cause?: SessionCause) => void,
    admit?: MemberAdmit,
  ) {
    this.session = session;
    this.members = [lead];
    this.#settle = settle;
    this.admit = admit;
  }

  /** The next user message from the head of the session's queue (none once closed or aborted). */
  take(): Job | undefined {
    if (this.closed || this.aborting) return undefined;
    const job = this.session.takeUserMessage();
    if (job !== undefined) {
      this.members.push(job);
      if (job.entry !== undefined) markCommitted(this.session, job);
    }
    return job;
  }

  /** Gives back `job`, the member taken last, to the head of the session's queue: no more messages join. */
  giveBack(job: Job): void {
    if (this.members[this.members.length - 1] === job) this.members.pop();
    this.closed = true;
    this.session.requeue(job);
  }

  /** Defers `member` to the batch's turn; its own caller's abort stops just it. */
  merge(member: MergedMember): void {
    this.merged.push(member);
    member.job.stop.onAbort(() => {
      this.#memberAborted(member.job);
    });
  }

  /** The merged members still waiting for their outcome. */
  liveMerged(): MergedMember[] {
    return this.merged.filter((m) => !m.job.settled);
  }

  /** Aborts the batch: its turn and every member. */
  abort(reason: unknown): void {
    if (this.aborting) return;
    this.aborting = true;
    this.closed = true;
    this.turnStop.abort(reason);
    for (const job of this.members) job.stop.abort(reason);
  }

  /** A stop action was applied and saved: every signal waiting in the session's queue ends `stopped`. */
  stopQueued(): void {
    for (const queued of this.session.waitingSignals()) this.#settle(queued, stoppedOutcome(this.session.ctx));
  }

  /** The signal a newer user message fires to interrupt the batch's turn at its next safe point. */
  get interruptSignal(): AbortSignal {
    return this.#interrupt.signal;
  }

  /**
   * Interrupts the batch's turn (`whenBusy: 'interrupt'`): no more messages join, and the turn is
   * asked to end at its next safe point. Unlike {@link Batch.abort}, nothing is aborted: a tool
   * call in flight finishes, and what the turn completed is saved.
   */
  interrupt(reason: unknown): void {
    if (this.aborting || this.interrupted) return;
    this.interrupted = true;
    this.closed = true;
    this.#interrupt.abort(reason);
  }

  /** Settles `job` (once). */
  settle(job: Job, outcome: Outcome, cause?: SessionCause): void {
    if (!job.settled && job.entry !== undefined) this.#settledWith.set(job, outcome);
    this.#settle(job, outcome, cause);
  }

  /** See `RunningBatch.memberOutcome`. */
  memberOutcome(job: Job, shared: Outcome): Outcome | undefined {
    return this.#settledWith.get(job) ?? this.mergedOutcome?.(job, shared);
  }

  /** One member's own abort: it is `stopped` now (its message stays); the turn stops when no member is left. */
  #memberAborted(job: Job): void {
    if (this.aborting || job.settled || !this.merged.some((m) => m.job === job)) return;
    this.settle(job, stoppedOutcome(this.session.ctx));
    if (this.turnRunning && this.liveMerged().length === 0) this.turnStop.abort(job.stop.signal.reason);
  }
}

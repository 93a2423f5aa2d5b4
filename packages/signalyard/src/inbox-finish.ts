import {
  outcomeFromJson,
  type Inbox,
  type InboxEntry,
  type InboxLease,
  type Outcome,
  type OutcomeJson,
} from '@signalyard/core';
import { compareInboxSeq, outcomeJsonOnce } from '@signalyard/core/internal';
import type { InboxProducer } from './inbox-producer.js';
import type { EntryPublisher } from './inbox-publisher.js';
import { markStored } from './inbox-fields.js';
import { coverEntry, coveredLive, lostError } from './inbox-settle.js';
import type { Job } from './live-session.js';
import { stoppedOutcome } from './outcomes.js';
import type { AgentRuntime } from './runner-options.js';
import type { SessionPersistence } from './session-persistence.js';
import type { SessionQueue } from './session-queue.js';

/** What an {@link EntryFinisher} works with. @internal */
export interface FinishDeps {
  readonly inbox: Inbox;
  readonly queue: SessionQueue;
  readonly producer: InboxProducer;
  readonly outcomeTtlMs: number;
  readonly maxOutcomeBytes: number;
  readonly persistence: SessionPersistence;
  readonly maxHistoryMessages: number;
  /** Each entry's stream publisher. */
  readonly publishers: WeakMap<InboxEntry, EntryPublisher>;
}

/** The leased key an entry was fed under, as {@link EntryFinisher.finish} sees it. @internal */
export interface FinishWork {
  readonly key: string;
  readonly lease: InboxLease;
  /** Entries a delete entry's sweep acknowledged (their outcomes stored): their finish does nothing more. */
  readonly swept: Set<string>;
  /** The outcomes of the entries fed and not finished yet, by receipt id. */
  readonly outcomes: ReadonlyMap<string, { readonly job: Job | undefined; readonly outcome: Promise<Outcome> }>;
  /** False once the lease is lost (or the worker is closing): nothing more is saved under it. */
  holds(): boolean;
}

/**
 * The worker's last writes of a settled entry, after its settling save (inbox.md guarantee 2):
 * its stream's last events, its outcome (to this process's waits, and stored), then its
 * acknowledgement — in one write with `Inbox.settle` when the transport has it (one round trip
 * on PostgreSQL), else `publishMany` beside `putOutcome`, then `ack`. The outcome is stored
 * before, or with, the acknowledgement, never after.
 * @internal
 */
export class EntryFinisher {
  readonly #d: FinishDeps;

  constructor(deps: FinishDeps) {
    this.#d = deps;
  }

  /**
   * Finishes one entry once its job settled: the checkpoint covers it (a version only advancing
   * `inboxSeq` when its application saved nothing) → its outcome → its acknowledgement; a stop's
   * victims (covered by the stop's save) after it.
   * @throws what the store or the inbox throws (the caller gives the lease up).
   */
  async finish(
    work: FinishWork,
    entry: InboxEntry,
    job: Job | undefined,
    outcome: Outcome,
    agent: AgentRuntime | undefined,
  ): Promise<void> {
    const swept = (): boolean => work.swept.has(entry.receiptId); // a delete's sweep stored its outcome and acked it
    if (swept()) return;
    if (job?.lockLost === true) {
      this.#d.publishers.get(entry)?.abandon();
      return; // dropped, or its lease lost mid-turn: unsettled
    }
    if (job?.skipped === true) {
      await this.ackSettled(entry, job.recorded);
      return;
    }
    // Stopped while it waited (the lease holder acted at once): settled by the stop's save, which
    // covers it and records its outcome; the stop's finish then stores that outcome and acks it.
    // Stored before that save, a kill in between would leave `stopped` stored for an entry the
    // next worker may apply.
    if (job?.stoppedBy !== undefined) return;
    const { queue, persistence, maxHistoryMessages } = this.#d;
    if (job !== undefined && agent !== undefined && !coveredLive(queue.live(work.key), entry)) {
      if (!work.holds()) return; // unsettled: a later delivery settles it
      const mark = { seq: entry.seq, receiptId: entry.receiptId, partial: false };
      // Queued behind a delete entry, the cover would bring the deleted session back: its sweep settled it.
      await queue.enqueueTask(work.key, agent, (s) =>
        swept() ? Promise.resolve() : coverEntry(persistence, maxHistoryMessages, s, job, outcome, mark),
      );
      if (swept()) return;
    }
    await this.deliver(entry, outcome);
    // A stop: the entries it stopped are covered by its save (one save for all, recording their
    // outcomes): stored and acked now.
    for (const victim of job?.stopped ?? []) {
      const ctx = { sessionKey: entry.sessionKey, agentId: agent?.id ?? '' };
      await this.deliver(victim.entry as InboxEntry, stoppedOutcome(ctx));
    }
  }

  /**
   * Before a delete entry is applied: every entry of the key still in the inbox below it —
   * applied already, in `seq` order — gets its outcome stored and is acknowledged, so that none
   * is redelivered once the checkpoint (and its `inboxSeq`) is gone. Its own finish then does
   * nothing more (no covering save: that would bring the deleted session back).
   * @throws InboxError `LEASE_LOST` once the lease is lost; what the inbox throws.
   */
  async sweep(work: FinishWork, del: InboxEntry): Promise<void> {
    for await (const entry of this.#d.inbox.read(work.lease)) {
      if (compareInboxSeq(entry.seq, del.seq) >= 0) break;
      if (!work.holds()) throw lostError(work.key, 'the lease is lost');
      const open = work.outcomes.get(entry.receiptId);
      if (open !== undefined) {
        const outcome = await open.outcome;
        // An entry found settled before (skipped) keeps the outcome stored then.
        if (open.job?.skipped !== true) await this.putOutcome(entry, outcome);
      }
      work.swept.add(entry.receiptId);
      await this.#d.inbox.ack(entry);
    }
  }

  /** A settled entry's outcome: to its stream's readers and this process's waits, stored, and the entry acknowledged. */
  async deliver(entry: InboxEntry, outcome: Outcome): Promise<void> {
    const { inbox } = this.#d;
    if (inbox.settle === undefined) {
      await this.putOutcome(entry, outcome);
      await inbox.ack(entry);
      return;
    }
    const events = await this.#d.publishers.get(entry)?.take(outcome, entry.attempts);
    this.#d.producer.settledHere(entry.receiptId, outcome);
    const json = outcomeJsonOnce(outcome, this.#d.maxOutcomeBytes);
    await inbox.settle(entry, json, this.#d.outcomeTtlMs, events);
    markStored(this.#d.queue.live(entry.sessionKey), entry.receiptId);
  }

  /** A settled entry's outcome: to its stream's readers (after the turn's events), this process's waits, and stored (`putOutcome`). */
  async putOutcome(entry: InboxEntry, outcome: Outcome): Promise<void> {
    // The outcome event goes out beside the stored outcome (one write batch on SQLite), both before the ack.
    const published = this.#d.publishers.get(entry)?.finish(outcome, entry.attempts);
    this.#d.producer.settledHere(entry.receiptId, outcome);
    const json = outcomeJsonOnce(outcome, this.#d.maxOutcomeBytes);
    await Promise.all([published, this.#d.inbox.putOutcome(entry.receiptId, json, this.#d.outcomeTtlMs)]);
    markStored(this.#d.queue.live(entry.sessionKey), entry.receiptId);
  }

  /**
   * Acknowledges an entry the checkpoint settled already, after storing the outcome its settling
   * save recorded (`inboxOutcomes`, read when it was found settled): the worker that settled it may
   * have died before `putOutcome`. The transports keep the first outcome stored, so one stored
   * already stays.
   */
  async ackSettled(entry: InboxEntry, recorded: OutcomeJson | undefined): Promise<void> {
    const { inbox } = this.#d;
    const publisher = this.#d.publishers.get(entry);
    if (recorded !== undefined && publisher !== undefined) {
      await publisher.finish(outcomeFromJson(recorded), entry.attempts); // readers of its log end with it
    }
    publisher?.abandon();
    if (recorded !== undefined) {
      await inbox.putOutcome(entry.receiptId, recorded, this.#d.outcomeTtlMs);
      markStored(this.#d.queue.live(entry.sessionKey), entry.receiptId); // stored: later saves need not record it
    }
    await inbox.ack(entry);
  }
}

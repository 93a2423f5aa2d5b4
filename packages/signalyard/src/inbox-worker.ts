import { randomUUID } from 'node:crypto';
import { signal as makeSignal, type InboxEntry, type InboxLease, type Outcome } from '@signalyard/core';
import { compareInboxSeq, errorText } from '@signalyard/core/internal';
import { applyControl, appliedBefore, type ControlEnd, type ControlHooks } from './inbox-control.js';
import { EntryFinisher, type FinishWork } from './inbox-finish.js';
import {
  agentIdOfKey,
  idleLeaseMs,
  isSpare,
  newKeyWork,
  renewTimer,
  stillIdle,
  type KeyWork,
} from './inbox-key-work.js';
import { EntryPublisher } from './inbox-publisher.js';
import { admitMember, coverEntry, coveredLive, gateEntry, lostError, type GateDeps } from './inbox-settle.js';
import { keepRecorded, keepUnstored } from './inbox-fields.js';
import type { WorkerDeps } from './inbox-worker-deps.js';
import type { Job, LiveSession } from './live-session.js';
import { failedOutcome, inputError } from './outcomes.js';
import type { AgentRuntime } from './runner-options.js';
import type { InboxHooks } from './session-queue.js';

const noop = (): void => undefined;

/**
 * A worker (inbox.md): takes leases on session keys with entries (up to `maxSessions`), woken by
 * the inbox's notices and every `pollMs`; feeds each key's entries to the session queue in `seq`
 * order (so stops, `whenBusy` and control entries behave as in one process); renews the lease
 * every `leaseMs / 3`; and finishes each entry once its job is settled: the checkpoint covers it
 * (`inboxSeq`) → `putOutcome` → `ack`. A lost lease aborts the turn in flight (`LEASE_LOST`) and
 * saves nothing more.
 * @internal
 */
export class InboxWorker {
  readonly #d: WorkerDeps;
  readonly id: string;
  readonly #works = new Map<string, KeyWork>();
  readonly #workOf = new WeakMap<InboxEntry, KeyWork>();
  /** Each entry's stream publisher (its turn's events to the receipt's log). */
  readonly #publishers = new WeakMap<InboxEntry, EntryPublisher>();
  #closing = false;
  #ticking: Promise<void> | undefined;
  #tickAgain = false;
  #poll: ReturnType<typeof setInterval> | undefined;
  #offNotify: (() => void) | undefined;
  /** Releases under way of idle leases and of leases acquired while closing (`releaseAll` waits for them too). */
  readonly #releasing = new Set<Promise<void>>();

  readonly #finisher: EntryFinisher;
  /** An acquisition found every slot taken (by keys with work). */
  #starved = false;

  constructor(deps: WorkerDeps) {
    this.#d = deps;
    this.#finisher = new EntryFinisher({ ...deps, publishers: this.#publishers });
    this.id = deps.settings.id ?? `worker-${randomUUID()}`;
  }

  /** Starts listening and polling. */
  start(): void {
    this.#offNotify = this.#d.inbox.onNotify((key) => {
      const work = this.#works.get(key);
      if (work !== undefined) this.#feed(work);
      else this.#tick();
    });
    this.#poll = setInterval(() => {
      this.#tick();
      // A held key is looked at when no read of it began since the last tick: a lost notice
      // delays an entry by at most 2 × pollMs, and a key read on notices costs no poll reads.
      for (const work of this.#works.values()) {
        const looked = work.readSincePoll;
        work.readSincePoll = false; // a read this tick begins sets it again
        if (!looked) this.#feed(work);
      }
    }, this.#d.settings.pollMs);
    this.#poll.unref();
    this.#tick();
  }

  /** The queue's hooks around an entry's application. */
  hooks(settle: (job: Job, outcome: Outcome) => void): InboxHooks {
    const d = this.#d;
    const gate: GateDeps = {
      persistence: d.persistence,
      maxHistoryMessages: d.maxHistoryMessages,
      maxDeliveries: d.settings.maxDeliveries,
      holds: (job) => this.#holding(job) !== undefined,
      fresh: (job) => {
        const work = this.#holding(job);
        const fresh = work?.fresh === true;
        if (work !== undefined) work.fresh = false;
        return fresh;
      },
      beginDelivery: (job) => d.inbox.beginDelivery(job.entry as InboxEntry),
      delivering: (job, attempt) => {
        this.#publishers.get(job.entry as InboxEntry)?.begin(attempt);
      },
      drop: (session, job, why) => {
        job.lockLost = true;
        if (job.entry !== undefined) this.#publishers.get(job.entry)?.abandon();
        const work = job.entry === undefined ? undefined : this.#workOf.get(job.entry);
        if (work !== undefined) this.#lose(work, why);
        settle(job, failedOutcome(session.ctx, lostError(session.key, why)));
      },
      settle,
    };
    return {
      gate: (session, job) => gateEntry(gate, session, job),
      member: (session, job, carried) => admitMember(gate, session, job, carried),
      applied: (session, job, outcome) => this.#cover(session, job, outcome),
    };
  }

  /** The work whose live lease `job`'s entry was fed under, if still held. */
  #holding(job: Job): KeyWork | undefined {
    const work = job.entry === undefined ? undefined : this.#workOf.get(job.entry);
    return work === undefined || work.lost || this.#closing ? undefined : work;
  }

  /** After an entry's job applied: the checkpoint covers it (a version only advancing `inboxSeq` when it saved nothing). */
  async #cover(session: LiveSession, job: Job, outcome: Outcome): Promise<void> {
    const entry = job.entry as InboxEntry;
    if (job.skipped === true || job.lockLost || coveredLive(session, entry)) return;
    if (this.#holding(job) === undefined) return;
    try {
      const mark = { seq: entry.seq, receiptId: entry.receiptId, partial: false };
      await coverEntry(this.#d.persistence, this.#d.maxHistoryMessages, session, job, outcome, mark);
    } catch (error) {
      job.lockLost = true;
      const work = this.#workOf.get(entry);
      if (work !== undefined) this.#lose(work, error);
    }
  }

  // ------------------------------------------------------------------ leases

  #tick(): void {
    if (this.#closing) return;
    if (this.#ticking !== undefined) {
      this.#tickAgain = true;
      return;
    }
    this.#ticking = this.#acquire().finally(() => {
      this.#ticking = undefined;
      if (this.#tickAgain) {
        this.#tickAgain = false;
        this.#tick();
      }
    });
  }

  async #acquire(): Promise<void> {
    const spare = [...this.#works.values()].filter(isSpare); // slots of idle leases count as free
    const free = this.#d.maxSessions - this.#works.size + spare.length;
    this.#starved = free <= 0; // the next key to go idle looks again
    if (free <= 0) return;
    let leases: InboxLease[];
    try {
      leases = await this.#d.inbox.acquire(this.id, { leaseMs: this.#d.settings.leaseMs, max: free });
    } catch (error) {
      if (!this.#closing) this.#d.warn(`inbox worker ${this.id}: acquire failed: ${errorText(error)}`);
      return;
    }
    for (const lease of leases) {
      let idle: KeyWork | undefined; // a key with entries beats an idle one (unless that got work meanwhile)
      while (this.#works.size >= this.#d.maxSessions && (idle = spare.shift()) !== undefined)
        if (isSpare(idle)) void this.#giveUp(idle, false);
      if (this.#closing || this.#works.has(lease.key) || this.#works.size >= this.#d.maxSessions)
        void this.#release(lease);
      else this.#startKey(lease);
    }
  }

  #startKey(lease: InboxLease): void {
    const work = newKeyWork(lease);
    this.#works.set(lease.key, work);
    work.renewTimer = renewTimer(this.#d.inbox, lease, this.#d.settings.leaseMs, (why) => {
      this.#lose(work, why);
    });
    this.#feed(work);
  }

  /**
   * The lease is lost (or cannot be kept): nothing more under it — the turn in flight is aborted
   * with `LEASE_LOST` and saves nothing after; queued entries of it are dropped by the gate.
   */
  #lose(work: KeyWork, why: unknown): void {
    if (work.lost) return;
    work.lost = true;
    clearInterval(work.renewTimer);
    this.#d.queue.live(work.key)?.unstoredOutcomes?.clear();
    if (this.#works.get(work.key) === work) this.#works.delete(work.key);
    this.#abortRunning(work, lostError(work.key, why));
    this.#tick();
  }

  /** Aborts the turn in flight under `work`'s lease, marking it so that it saves nothing more. */
  #abortRunning(work: KeyWork, reason: unknown): void {
    const session = this.#d.queue.live(work.key);
    if (session === undefined) return;
    const { batch, running } = session;
    if (batch !== undefined) {
      if (batch.members.some((j) => j.entry !== undefined && this.#workOf.get(j.entry) === work)) {
        for (const member of batch.members) if (!member.settled) member.lockLost = true;
        (batch as { lockLost?: boolean }).lockLost = true;
        batch.abort(reason);
      }
      return;
    }
    if (running?.kind === 'signal' && running.entry !== undefined && this.#workOf.get(running.entry) === work) {
      running.lockLost = true;
      running.stop.abort(reason);
    }
  }

  // ------------------------------------------------------------------ entries

  /** Reads the key's entries after those fed, feeding them to the queue (one read at a time). */
  #feed(work: KeyWork): void {
    if (work.lost || this.#closing) return;
    if (work.feeding !== undefined) {
      work.feedAgain = true;
      return;
    }
    work.feeding = this.#read(work).finally(() => {
      work.feeding = undefined;
      if (work.feedAgain) {
        work.feedAgain = false;
        this.#feed(work);
      } else if (work.pending === 0)
        void (work.idleSince === undefined ? this.#idle(work) : this.#giveUpWhenIdle(work)); // idle already: this read looked
    });
  }

  async #read(work: KeyWork): Promise<void> {
    work.readSincePoll = true;
    try {
      for await (const entry of this.#d.inbox.read(work.lease, work.fedThrough)) {
        if (work.lost || this.#closing) return;
        if (work.fedThrough !== undefined && compareInboxSeq(entry.seq, work.fedThrough) <= 0) continue;
        work.fedThrough = entry.seq;
        this.#enqueue(work, entry);
      }
    } catch (error) {
      this.#lose(work, error);
    }
  }

  #enqueue(work: KeyWork, entry: InboxEntry): void {
    work.pending++;
    work.idleSince = undefined;
    const agentId = entry.agentId ?? agentIdOfKey(entry.sessionKey);
    const agent = agentId === undefined ? undefined : this.#d.agents.get(agentId);
    let outcome: Promise<Outcome>;
    let job: Job | undefined;
    try {
      if (agent === undefined)
        throw inputError(
          `No agent ${JSON.stringify(agentId)} in this runner for inbox entry ${JSON.stringify(entry.receiptId)} of session ${JSON.stringify(entry.sessionKey)}`,
        );
      this.#workOf.set(entry, work);
      if (entry.control === 'rewind' || entry.control === 'delete') {
        this.#enqueueControl(work, entry, agent);
        return;
      }
      const publisher = new EntryPublisher(this.#d.inbox, entry.receiptId, this.#d.warn);
      this.#publishers.set(entry, publisher);
      const queued = this.#d.queue.enqueueEntry(
        work.key,
        agent,
        makeSignal(entry.signal.kind, entry.signal.payload),
        entry,
        publisher.sink,
      );
      job = queued.job;
      outcome = queued.outcome;
    } catch (error) {
      outcome = Promise.resolve(failedOutcome({ sessionKey: entry.sessionKey, agentId: agentId ?? '' }, error));
    }
    work.outcomes.set(entry.receiptId, { job, outcome });
    // Kept on the live session until stored: later saves of the session record it meanwhile.
    void outcome.then((settled) => {
      if (job !== undefined && !job.skipped && !job.lockLost && !work.lost)
        keepUnstored(this.#d.queue.live(work.key), entry, settled, this.#d.maxOutcomeBytes);
    }, noop);
    work.finishing = work.finishing.then(() => this.#finish(work, entry, job, outcome, agent));
  }

  /** A control entry (rewind, delete): a task in the session's queue, in `seq` order with its signals. */
  #enqueueControl(work: KeyWork, entry: InboxEntry, agent: AgentRuntime): void {
    const hooks: ControlHooks = {
      holds: () => !work.lost && !this.#closing,
      sweep: () => this.#finisher.sweep(this.#view(work), entry),
      appliedBefore: () => appliedBefore(this.#d.inbox, entry, this.#d.settings.pollMs),
    };
    const ended = this.#d.queue
      .enqueueTask(work.key, agent, async (session) => {
        const end = await applyControl(this.#d.control, session, entry, hooks);
        // Kept on the live session until stored: the session's next saves record it meanwhile.
        if (end.kind === 'applied' && hooks.holds()) keepUnstored(session, entry, end.outcome, this.#d.maxOutcomeBytes);
        if (end.kind === 'skipped' && hooks.holds()) keepRecorded(session, entry, end.recorded);
        return end;
      })
      .catch((): ControlEnd => ({ kind: 'left' }));
    work.finishing = work.finishing.then(async () => {
      try {
        const end = await ended;
        if (end.kind === 'skipped') await this.#finisher.ackSettled(entry, end.recorded);
        else if (end.kind === 'applied') await this.#finisher.deliver(entry, end.outcome);
      } catch (error) {
        this.#lose(work, error);
      } finally {
        this.#finished(work);
      }
    });
  }

  /** `work` as the finisher sees it. */
  #view(work: KeyWork): FinishWork {
    return {
      key: work.key,
      lease: work.lease,
      swept: work.swept,
      outcomes: work.outcomes,
      holds: () => !work.lost && !this.#closing,
    };
  }

  /** One entry of `work` finished (settled, or left): give the lease up when nothing is left. */
  #finished(work: KeyWork): void {
    work.pending--;
    if (work.pending === 0 && work.feeding === undefined) void this.#idle(work);
  }

  /** Finishes one entry once its job settled: covered by the checkpoint → outcome → ack. */
  async #finish(
    work: KeyWork,
    entry: InboxEntry,
    job: Job | undefined,
    settled: Promise<Outcome>,
    agent: AgentRuntime | undefined,
  ): Promise<void> {
    const outcome = await settled;
    try {
      await this.#finisher.finish(this.#view(work), entry, job, outcome, agent);
    } catch (error) {
      this.#lose(work, error);
    } finally {
      work.outcomes.delete(entry.receiptId);
      work.swept.delete(entry.receiptId);
      this.#finished(work);
    }
  }

  /** Whether `work` must not be given up now: lost already, closing, or entries to finish. */
  #busy(work: KeyWork): boolean {
    return work.lost || this.#closing || work.pending > 0;
  }

  /** Nothing left to finish: look once more (as a feed), then {@link InboxWorker.#giveUpWhenIdle}. */
  async #idle(work: KeyWork): Promise<void> {
    if (this.#busy(work) || work.feeding !== undefined) return;
    const reading = this.#read(work);
    work.feeding = reading;
    await reading;
    work.feeding = undefined;
    if (work.feedAgain) {
      work.feedAgain = false;
      this.#feed(work);
      return;
    }
    await this.#giveUpWhenIdle(work);
  }

  /**
   * Gives the lease up once `work` has been idle {@link idleLeaseMs} (since it first found nothing), unless work
   * comes meanwhile: a session whose signals come one after another keeps its lease (and loaded state) between them.
   */
  async #giveUpWhenIdle(work: KeyWork): Promise<void> {
    if (this.#busy(work)) return;
    const first = work.idleSince === undefined;
    work.idleSince ??= performance.now();
    if (first && this.#starved) this.#tick(); // keys with entries may be waiting for its slot
    const left = work.idleSince + idleLeaseMs(this.#d.settings) - performance.now();
    if (left > 0) {
      const spell = ++work.idleSpells; // a later wait (after a poll's read) replaces this one
      await new Promise<void>((resolve) => setTimeout(resolve, left).unref());
      if (this.#busy(work) || !stillIdle(work, spell)) return;
    }
    await this.#giveUp(work, true);
  }

  /** Gives the lease of idle `work` up (then looks for other keys' work when `tick`). */
  async #giveUp(work: KeyWork, tick: boolean): Promise<void> {
    work.lost = true;
    clearInterval(work.renewTimer);
    if (this.#works.get(work.key) === work) this.#works.delete(work.key);
    await this.#release(work.lease);
    if (tick) this.#tick();
  }

  /** Gives a lease up outside `releaseAll`, tracked so that `releaseAll` waits for it too. */
  async #release(lease: InboxLease): Promise<void> {
    const released = this.#d.inbox.release(lease).catch(noop);
    this.#releasing.add(released);
    await released.finally(() => this.#releasing.delete(released));
  }

  // ------------------------------------------------------------------ close

  /** Stops taking work: no more acquisitions, reads or notices. */
  stop(): void {
    this.#closing = true;
    clearInterval(this.#poll);
    this.#offNotify?.();
  }

  /** Aborts every turn in flight under a lease (`close()` after `closeTimeoutMs`): nothing more is saved. */
  abortAll(reason: unknown): void {
    for (const work of this.#works.values()) this.#abortRunning(work, reason);
  }

  /** Waits for every entry to finish, then releases every lease (not counted as deliveries), idle ones given up meanwhile included. */
  async releaseAll(): Promise<void> {
    // An acquisition in flight releases what it gets (closing); it is not awaited: it may hang.
    const works = [...this.#works.values()];
    await Promise.all(works.map((w) => w.finishing));
    for (const work of works) {
      clearInterval(work.renewTimer);
      work.lost = true;
      this.#works.delete(work.key);
    }
    await Promise.all(works.map((w) => this.#d.inbox.release(w.lease).catch(noop)));
    await Promise.all([...this.#releasing]); // idle leases being given up as the close began
  }
}

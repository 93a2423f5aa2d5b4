import { AbortedError, type ChatMessage, type Outcome, type StrategySnapshot } from '@signalyard/core';
import { commitApplied, emitTransitions, escapedOutcome } from './apply-commit.js';
import type { ApplierDeps, SignalApplier } from './apply-signal.js';
import type { BatchApply } from './appliers.js';
import type { Batch, MergedMember } from './busy-batch.js';
import { appendHistory, userMessageOf } from './history.js';
import type { Job, LiveSession, LoadedState } from './live-session.js';
import { asSignalyardError, failedOutcome, outcomeOf, type Applied } from './outcomes.js';
import { decide } from './route-decision.js';
import { signalCause } from './session-cause.js';
import { runTurn } from './turn.js';
import { interruptedApplied } from './turn-interrupt.js';
import type { TurnSink } from './turn-stream.js';

/** What {@link BatchApplier} works with. @internal */
export interface BatchDeps extends ApplierDeps {
  /** Applies a non-`continue` member's action on its own. */
  readonly applier: SignalApplier;
}

/** How a pass over the batch ended: done, or start over on the reloaded session. */
type PassEnd = 'done' | 'conflict' | 'reload';

/** One pass over a batch: its loaded state and the history built so far. */
interface Pass {
  readonly session: LiveSession;
  readonly batch: Batch;
  readonly loaded: LoadedState;
  /** The conflicts seen so far (at most `MAX_CONFLICT_RETRIES` re-applications). */
  readonly attempt: number;
  /** The loaded history plus the user messages of the members routed so far. */
  history: readonly ChatMessage[];
}

/**
 * Applies a batch of user messages (`whenBusy` collect / interrupt): each member is appended to
 * the history and routed on its own, in arrival order; a member routed to anything but
 * `continue` is applied and saved on its own, in its place; those routed to `continue` are
 * answered by one engine turn (`TurnContext.signals`), saved as one version (`cause.merged`), and
 * every one of their callers gets that turn's outcome with its own action (`mergedWith`). A
 * version conflict reloads and goes over the members not settled yet again (a message already
 * saved is never appended twice). Settles every member, except after a lost lock (the caller
 * settles those).
 * @internal
 */
export class BatchApplier implements BatchApply {
  readonly #d: BatchDeps;

  constructor(deps: BatchDeps) {
    this.#d = deps;
  }

  /** Load → (route → apply → save)* → one merged turn → save. `reload`: load from the store first. */
  async run(batch: Batch, reload: boolean): Promise<void> {
    const { session } = batch;
    for (let attempt = 0, force = reload; ; force = true) {
      let loaded = session.state;
      try {
        if (force || loaded.kind !== 'loaded' || session.loading !== undefined)
          loaded = await this.#d.persistence.loadShared(session, force);
      } catch (error) {
        const failure = asSignalyardError(error, 'CHECKPOINT_LOAD_FAILED');
        for (const job of batch.members) batch.settle(job, failedOutcome(session.ctx, failure));
        return;
      }
      batch.merged = [];
      const end = await this.#pass({ session, batch, loaded, attempt, history: loaded.history });
      if (end === 'done' || batch.lockLost) return;
      if (end === 'conflict') attempt++;
    }
  }

  async #pass(p: Pass): Promise<PassEnd> {
    const { batch } = p;
    for (let i = 0; ; i++) {
      if (batch.lockLost) return 'done'; // the caller fails what is left
      // Taken here, synchronously before the turn starts: a message arriving until then joins.
      const taken = i >= batch.members.length;
      const job = taken ? batch.take() : batch.members[i];
      if (job === undefined) break;
      // An inbox entry's delivery is counted before any engine runs for it (inbox.md guarantee 9).
      if (taken && job.entry !== undefined && batch.admit !== undefined) {
        const admitted = await batch.admit(job, p.loaded.carried);
        if (admitted === 'giveBack') {
          batch.giveBack(job);
          break;
        }
      }
      batch.through = i;
      if (job.settled) continue;
      this.#announce(p.session, job);
      if (job.stop.aborted) {
        batch.settle(job, outcomeOf(p.session.ctx, { status: 'stopped' }));
        continue;
      }
      const end = await this.#member(p, job);
      if (end !== 'done') return end;
    }
    if (batch.merged.length === 0) return 'done';
    return this.#mergedTurn(p);
  }

  #announce(session: LiveSession, job: Job): void {
    if (job.announced) return;
    job.announced = true;
    if (this.#d.hub.hasListeners) this.#d.hub.emit({ type: 'signal_received', ...session.ctx, signal: job.signal });
  }

  /** Appends the member's message and routes it: deferred to the turn (`continue`), or applied and saved now. */
  async #member(p: Pass, job: Job): Promise<PassEnd> {
    const { session, batch, loaded } = p;
    const user = p.batch.saved.has(job) || job.committed === true ? undefined : userMessageOf(job.signal);
    const history = user === undefined ? p.history : appendHistory(p.history, user, this.#d.maxHistoryMessages);
    const arrival = { history, engineState: loaded.engineState };
    const decision = decide(this.#d, session, job, loaded);
    if (!decision.ok)
      return this.#saveOwn(p, job, { outcome: failedOutcome(session.ctx, decision.error), save: arrival });
    const { action, match } = decision;
    if (action?.type === 'continue') {
      batch.merge({ job, action, match });
      p.history = history;
      return 'done';
    }
    let applied: Applied;
    try {
      applied = await this.#d.applier.applyAction({ session, loaded, job, history, arrival }, action, match);
    } catch (error) {
      await this.#escaped(p, [...this.#unsavedMerged(batch), job], error);
      return 'reload';
    }
    return this.#saveOwn(p, job, applied);
  }

  /** Saves what a member applied on its own produced (with the deferred members' messages before it). */
  async #saveOwn(p: Pass, job: Job, applied: Applied): Promise<PassEnd> {
    const { session, batch, loaded } = p;
    if (batch.lockLost) return 'done';
    if (applied.save !== undefined) {
      const pending = [...this.#unsavedMerged(batch), job];
      // The merged members before it wait for the turn: this save records their messages, not their settling.
      batch.waiting = batch.liveMerged().map((m) => m.job);
      let failed: Outcome | 'conflict' | undefined;
      session.savedCause = undefined; // set again by this save (the outcome event's `cause`)
      try {
        failed = await this.#save(
          p,
          applied,
          signalCause(this.#d.persistence.causes, job.signal, applied.outcome),
          pending,
        );
      } finally {
        batch.waiting = undefined;
      }
      if (failed === 'conflict') return 'conflict';
      if (failed !== undefined) {
        batch.settle(job, failed);
        return 'reload';
      }
      for (const j of pending) batch.saved.add(j);
      p.history = loaded.history;
    }
    batch.settle(job, applied.outcome, applied.save === undefined ? undefined : session.savedCause);
    if (applied.stopQueued === true) {
      batch.closed = true;
      batch.stopQueued();
      for (const later of batch.members.slice(batch.members.indexOf(job) + 1))
        if (!batch.merged.some((m) => m.job === later))
          batch.settle(later, outcomeOf(session.ctx, { status: 'stopped' }));
    }
    return 'done';
  }

  /**
   * Saves `applied` through {@link commitApplied}. `undefined` when saved (or nothing to save);
   * `'conflict'` to start over; else the failed outcome (after saving what arrived, when the
   * effects cannot be stored).
   */
  async #save(
    p: Pass,
    applied: Applied,
    cause: ReturnType<typeof signalCause>,
    arrived: readonly Job[],
  ): Promise<Outcome | 'conflict' | undefined> {
    const { session, loaded, attempt } = p;
    const saveArrivals = (failed: Outcome): Promise<void> => this.#saveArrivals(p, arrived, failed);
    const committed = await commitApplied(this.#d, { session, loaded, applied, cause, attempt, saveArrivals });
    if (committed.kind === 'conflict') return 'conflict';
    return committed.kind === 'failed' ? committed.outcome : undefined;
  }

  /** The merged members whose message is not stored yet. */
  #unsavedMerged(batch: Batch): Job[] {
    return batch.merged.filter((m) => !batch.saved.has(m.job)).map((m) => m.job);
  }

  /**
   * Saves the user messages of `jobs` (those not stored yet), in order, each on the reloaded
   * state; `initial`: the strategy snapshot to save a never-saved session with (the one taken when
   * it was loaded, when its strategy may be what threw).
   */
  async #saveArrivals(p: Pass, jobs: readonly Job[], outcome: Outcome, initial?: StrategySnapshot): Promise<void> {
    const { batch } = p;
    const through = batch.through;
    try {
      for (const job of jobs) {
        if (batch.saved.has(job)) continue;
        // Each save settles the inbox entries up to its own member only: never one not saved yet.
        batch.through = Math.min(through, batch.members.indexOf(job));
        await this.#d.persistence.saveArrival(
          p.session,
          job.signal,
          signalCause(this.#d.persistence.causes, job.signal, outcome),
          initial,
        );
        batch.saved.add(job);
      }
    } finally {
      batch.through = through;
    }
  }

  /**
   * Something escaped a member's own handling ({@link escapedOutcome}): the live state is dropped
   * (reloaded next pass), what arrived is saved, and the members `failed` fail.
   */
  async #escaped(p: Pass, failed: readonly Job[], error: unknown): Promise<void> {
    const last = failed[failed.length - 1];
    const what = last === undefined ? 'a batch' : `a ${last.signal.kind} signal`;
    const outcome = await escapedOutcome(p.session, what, error, (o, initial) =>
      this.#saveArrivals(p, failed, o, initial),
    );
    for (const job of failed) p.batch.settle(job, outcome);
  }

  /** The merged members' one engine turn, started synchronously after the last member was taken. */
  async #mergedTurn(p: Pass): Promise<PassEnd> {
    const { session, batch } = p;
    const live = batch.liveMerged();
    const last = live[live.length - 1];
    let applied: Applied;
    // No member left, or the batch aborted before its turn: no engine run; what arrived is kept.
    const ran = last !== undefined && !batch.turnStop.aborted;
    if (last === undefined || !ran) {
      const arrival = { history: p.history, engineState: p.loaded.engineState };
      applied = { outcome: outcomeOf(session.ctx, { status: 'stopped' }), save: arrival };
    } else {
      try {
        applied = await this.#runMergedTurn(p, live, last);
      } catch (error) {
        await this.#escaped(p, this.#unsavedMerged(batch), error);
        return 'reload';
      }
    }
    if (batch.lockLost) return 'done';
    const n = ran ? live.length : 1;
    const causeMember = last ?? batch.merged.at(-1);
    if (causeMember === undefined) return 'done'; // a batch with no merged member has no turn
    const cause = signalCause(this.#d.persistence.causes, causeMember.job.signal, applied.outcome, n);
    // The save records each merged member's own outcome (inbox.md: a crash before putOutcome).
    batch.mergedOutcome = (job, shared) => {
      const m = live.find((member) => member.job === job);
      return m === undefined ? undefined : memberOutcome(shared, m, n);
    };
    let failed: Outcome | 'conflict' | undefined;
    session.savedCause = undefined; // set again by this save (the outcome event's `cause`)
    try {
      failed = await this.#save(p, applied, cause, this.#unsavedMerged(batch));
    } finally {
      batch.mergedOutcome = undefined;
    }
    if (failed === 'conflict') return 'conflict';
    if (failed === undefined) {
      for (const m of batch.merged) batch.saved.add(m.job);
      if (applied.save === undefined) emitTransitions(this.#d.hub, session, applied); // saved: emitted already
      if (applied.stopQueued === true) batch.stopQueued();
    }
    // The turn's saved cause goes with the member it names (the last): recorders see the turn once.
    const saved = failed === undefined ? session.savedCause : undefined;
    for (const m of live)
      batch.settle(m.job, memberOutcome(failed ?? applied.outcome, m, n), m === causeMember ? saved : undefined);
    return 'done';
  }

  async #runMergedTurn(p: Pass, live: readonly MergedMember[], last: MergedMember): Promise<Applied> {
    const signals = live.map((m) => m.job.signal);
    const { session, batch } = p;
    const lead: Job = {
      kind: 'signal',
      signal: last.job.signal,
      resolve: () => undefined,
      settled: false,
      stop: batch.turnStop,
      detach: undefined,
      announced: true,
      lockLost: false,
      sink: fanOut(live),
      entry: last.job.entry,
    };
    const history = p.history;
    const arrival = { history, engineState: p.loaded.engineState };
    if (session.agent.whenBusy === 'interrupt') {
      session.interruptTurn = (reason) => {
        batch.interrupt(reason ?? new AbortedError({ message: 'Interrupted by a newer user message' }));
      };
    }
    batch.turnRunning = true;
    try {
      const input = { session, loaded: p.loaded, job: lead, action: last.action, match: last.match };
      const interruptSignal = batch.interruptSignal;
      const applied = await runTurn(this.#d, { ...input, history, arrival, signals, interruptSignal });
      return batch.interrupted ? interruptedApplied(applied) : applied;
    } finally {
      batch.turnRunning = false;
      session.interruptTurn = undefined;
    }
  }
}

/** A merged member's outcome: the turn's shared one, with its own action and route (and `mergedWith`). */
function memberOutcome(shared: Outcome, m: MergedMember, n: number): Outcome {
  const decidedBy = m.match === undefined ? undefined : { tier: m.match.tier, route: m.match.route };
  return { ...shared, action: m.action, decidedBy, ...(n > 1 && { mergedWith: n }) };
}

/** One sink feeding every member's stream, or `undefined` when no member is streamed. */
function fanOut(live: readonly MergedMember[]): TurnSink | undefined {
  const sinks = live.flatMap((m) => (m.job.sink === undefined ? [] : [m.job.sink]));
  if (sinks.length === 0) return undefined;
  if (sinks.length === 1) return sinks[0];
  return (event) => {
    for (const sink of sinks) sink(event);
  };
}

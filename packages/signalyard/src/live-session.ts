import { randomUUID } from 'node:crypto';
import type {
  ChatMessage,
  ExecutionStrategy,
  InboxEntry,
  Outcome,
  OutcomeJson,
  PendingApproval,
  SessionCause,
  Signal,
  SessionCheckpointV1,
  StrategySnapshot,
} from '@signalyard/core';
import type { ComposedRouter } from '@signalyard/router';
import type { ApprovalAliases } from './approval-aliases.js';
import type { AgentRuntime } from './runner-options.js';
import type { Stopper } from './stopper.js';
import type { TurnSink } from './turn-stream.js';

/** One signal waiting for, or going through, its session's queue. @internal */
export interface Job {
  readonly kind: 'signal';
  readonly signal: Signal;
  readonly resolve: (outcome: Outcome) => void;
  /** Set once the outcome is resolved; a settled job is skipped by the queue. */
  settled: boolean;
  /** Stops this signal's work: force_stop, the caller's abortSignal, close() timeout. */
  readonly stop: Stopper;
  /** Removes the listener on the caller's abortSignal. */
  detach: (() => void) | undefined;
  /** Whether `signal_received` was already emitted (stop signals routed on arrival). */
  announced: boolean;
  /** Set when the session's lock was lost while it ran: nothing more may be written for it. */
  lockLost: boolean;
  /** Where its events go when the caller reads it as a stream. */
  readonly sink: TurnSink | undefined;
  /**
   * Set once its engine committed (`ctx.commit`): the user message is saved, so applying the
   * signal again (after a conflict) does not append it again, and a failure saves nothing more.
   */
  committed?: boolean;
  /** The inbox entry it settles (a runner with a durable inbox); `undefined` on the in-process path. */
  readonly entry: InboxEntry | undefined;
  /**
   * The id of the signal's receipt (`ctx.idempotencyKey` builds on it): the entry's, or — without
   * an inbox — a fresh UUID made when a turn first asks.
   */
  receiptId?: string;
  /**
   * Set when the entry was found settled already (at or below `inboxSeq`): acknowledged, after
   * storing the outcome its settling save recorded (`inboxOutcomes`), if any.
   */
  skipped?: boolean;
  /**
   * A stop with an inbox entry: the waiting signals with entries it settled `stopped` on arrival
   * (the stop's settling save covers them and records their outcomes; then they are stored and acked).
   */
  stopped?: Job[];
  /** A waiting signal with an entry settled `stopped` on arrival by the stop `stoppedBy` (which has an entry too). */
  stoppedBy?: Job;
  /** The entry's durable delivery count once counted (`Inbox.beginDelivery`): counted once per delivery. */
  attempts?: number;
  /**
   * The outcome the checkpoint recorded for the entry of a `skipped` job (`inboxOutcomes`), read
   * when it was found settled (a later settle replaces it): stored before the acknowledgement.
   */
  recorded?: OutcomeJson;
}

/** An approval a rewind or fork retired, to be answered as denied with `reason`. @internal */
export interface StaleApproval {
  readonly id: string;
  readonly reason: string;
}

/**
 * Work on a session that is not a signal (a rewind, a delete): it waits its turn in the queue
 * like a signal, but stop signals never cancel it. @internal
 */
export interface Task {
  readonly kind: 'task';
  /** Set once it has run or was cancelled. */
  settled: boolean;
  /** Runs it (inside the session's lock, when there is one); settles its own promise. */
  run(session: LiveSession): Promise<void>;
  /** Rejects it without running (the runner closed). */
  cancel(error: unknown): void;
}

/** A batch of user messages being applied together: its jobs, and how to abort it all. @internal */
export interface RunningBatch {
  /** Every job taken into the batch, in arrival order. */
  readonly members: readonly Job[];
  /**
   * The index in `members` of the member being applied now: a save of the batch settles the
   * inbox entries of `members[0..through]` only (their user messages are in it, or they ended).
   */
  readonly through: number;
  /**
   * While a member applied on its own is saved: the merged members before it that wait for the
   * batch's turn. That save must not settle them (their messages are in it, their answer is not).
   */
  readonly waiting: readonly Job[] | undefined;
  /**
   * The outcome member `job` gets when a save of the batch whose own outcome is `shared` settles it
   * (what that save records for it): the one it was settled with already (applied on its own,
   * stopped), or — the merged turn's save — the turn's outcome with its own action and route and
   * `mergedWith` (busy-sessions.md); `undefined`: `shared` as it is.
   */
  memberOutcome(job: Job, shared: Outcome): Outcome | undefined;
  /** Stops its turn and every member. */
  abort(reason: unknown): void;
}

/** What a session's queue holds. @internal */
export type QueueEntry = Job | Task;

/** A session's live state once loaded from the store (or created fresh). @internal */
export interface LoadedState {
  readonly kind: 'loaded';
  /** This session's strategy instance. */
  readonly strategy: ExecutionStrategy;
  /** Its composed router: the strategy's routes, the agent's, the plugins'. */
  readonly router: ComposedRouter;
  /** The checkpoint version it was loaded at or last saved as (0 = never saved). */
  version: number;
  history: readonly ChatMessage[];
  engineState: unknown;
  /** The checkpoint's `pendingApprovals` (empty when none). */
  pendingApprovals: readonly PendingApproval[];
  /** The checkpoint's `staleApprovals` (empty when none). */
  staleApprovals: readonly StaleApproval[];
  /** The checkpoint's `approvalAliases`: public approval id → the engine's (empty when none). */
  aliases: ApprovalAliases;
  /** Top-level checkpoint fields the runner does not write itself (e.g. a newer release's), kept on save. */
  carried: Readonly<Record<string, unknown>>;
  /**
   * The strategy's snapshot as stored at `version` (for a session never saved: taken when it was
   * loaded; `undefined` if that threw): what an arrival is saved with when the strategy's
   * `snapshot()` throws during a turn.
   */
  savedStrategy: StrategySnapshot | undefined;
}

/** Not loaded yet, or dropped after a failed save (the next signal reloads it). @internal */
export interface UnloadedState {
  readonly kind: 'unloaded';
}

/** What the runner knows of a session's checkpointed state. @internal */
export type SessionState = UnloadedState | LoadedState;

/** The state of a session the runner has not loaded. @internal */
export const UNLOADED: UnloadedState = Object.freeze({ kind: 'unloaded' });

/** A session the runner has seen: its queue and its {@link SessionState}. @internal */
export class LiveSession {
  readonly key: string;
  readonly agent: AgentRuntime;
  /** The route context every predicate of this session receives. */
  readonly ctx: { readonly sessionKey: string; readonly agentId: string };
  /**
   * The waiting jobs are `#queue[#head..#tail)`. Taken slots are cleared, so a settled signal (and
   * its payload) is unreachable from here; the list itself is kept when the queue empties (a
   * session's next signal makes no new array), unless it grew large.
   */
  #queue: (QueueEntry | undefined)[] = [];
  #head = 0;
  #tail = 0;
  running: QueueEntry | undefined;
  /** A batch of user messages in flight (`whenBusy` collect / interrupt). */
  batch: RunningBatch | undefined;
  /**
   * While the engine turn of a batch runs (`whenBusy: 'interrupt'`): aborts it for a newer
   * message. Cleared when the turn ends, or once used.
   */
  interruptTurn: ((reason: unknown) => void) | undefined;
  /** The processing loop, while one runs (`LANE` of session-lane.ts while the fast lane runs it). */
  loop: Promise<void> | undefined;
  /** The fast lane's state for this session (session-lane.ts' `LaneState`), made when it first runs there. */
  lane: unknown = undefined;
  /**
   * With a durable inbox: the outcomes of this session's entries that the worker settled and has
   * not stored yet (`putOutcome` pending), by receipt id. Every settling save records them in
   * `inboxOutcomes`, so a crash after later saves cannot lose them.
   */
  unstoredOutcomes: Map<string, NonNullable<SessionCheckpointV1['inboxOutcomes']>[number]> | undefined;
  /**
   * With a durable inbox: receipt ids of this session's entries whose outcome this process has
   * stored (`settle`/`putOutcome` resolved), the latest few. The checkpoint's `inboxOutcomes` need
   * not carry them on: a settling save leaves them out of the outcomes it keeps from before.
   */
  storedOutcomes: Set<string> | undefined;

  /**
   * The cause of the last save with a summary (a signal's final save), until its signal settles:
   * the `outcome` event carries it (`cause`) for plugins that record turns.
   */
  savedCause: SessionCause | undefined = undefined;

  state: SessionState = UNLOADED;
  /** A load in flight (shared by the worker and a stop routed on arrival). */
  loading: Promise<LoadedState> | undefined;

  constructor(key: string, agent: AgentRuntime) {
    this.key = key;
    this.agent = agent;
    this.ctx = Object.freeze({ sessionKey: key, agentId: agent.id });
  }

  push(job: QueueEntry): void {
    this.#queue[this.#tail++] = job;
  }

  /** Empties the queue: every slot cleared, the indices back to 0. */
  #reset(): void {
    for (let i = this.#head; i < this.#tail; i++) this.#queue[i] = undefined;
    this.#head = 0;
    this.#tail = 0;
    if (this.#queue.length > 1024) this.#queue = [];
  }

  /** The next unsettled job, or undefined. */
  next(): QueueEntry | undefined {
    while (this.#head < this.#tail) {
      const job = this.#queue[this.#head] as QueueEntry;
      this.#queue[this.#head++] = undefined;
      if (this.#head > 1024 && this.#head * 2 > this.#tail) {
        this.#queue.splice(0, this.#head);
        this.#tail -= this.#head;
        this.#head = 0;
      }
      if (!job.settled) return job;
    }
    this.#reset();
    return undefined;
  }

  /**
   * Takes the next job when it is a `user_message` signal (skipping settled ones), else takes
   * nothing: a batch of user messages ends at the first queued entry of another kind.
   */
  takeUserMessage(): Job | undefined {
    if (!this.hasNext()) return undefined;
    const head = this.#queue[this.#head] as QueueEntry;
    if (head.kind !== 'signal' || head.signal.kind !== 'user_message') return undefined;
    return this.next() as Job;
  }

  /** Puts `job` back at the head of the queue (a batch member it gives back before applying it, a job the fast lane leaves to the general path). */
  requeue(job: QueueEntry): void {
    if (this.#head > 0) this.#queue[--this.#head] = job;
    else {
      this.#queue.unshift(job);
      this.#tail++;
    }
  }

  /** Whether `job` is in flight: the signal running, or a member of the batch running. */
  isRunning(job: Job): boolean {
    return this.running === job || (this.batch?.members.includes(job) ?? false);
  }

  /** The unsettled signals in flight: the one running, or the members of the batch running. */
  runningSignals(): Job[] {
    if (this.batch !== undefined) return this.batch.members.filter((j) => !j.settled);
    return this.running?.kind === 'signal' && !this.running.settled ? [this.running] : [];
  }

  /** The unsettled jobs waiting now (a copy; the queue is unchanged). */
  waiting(): QueueEntry[] {
    return this.#pending();
  }

  /** The unsettled signals waiting now (not tasks). */
  waitingSignals(): Job[] {
    return this.#pending().filter((e): e is Job => e.kind === 'signal');
  }

  #pending(): QueueEntry[] {
    const jobs: QueueEntry[] = [];
    for (let i = this.#head; i < this.#tail; i++) {
      const job = this.#queue[i] as QueueEntry;
      if (!job.settled) jobs.push(job);
    }
    return jobs;
  }

  /** Whether an unsettled job is waiting (without taking it). */
  hasNext(): boolean {
    // Settled jobs at the head (stopped while waiting) are dropped here, so they are released
    // even when no job follows them.
    while (this.#head < this.#tail && (this.#queue[this.#head] as QueueEntry).settled) {
      this.#queue[this.#head++] = undefined;
    }
    if (this.#head < this.#tail) return true;
    this.#reset();
    return false;
  }

  /** Removes and returns every unsettled queued job. */
  drain(): QueueEntry[] {
    const jobs = this.#pending();
    this.#reset();
    return jobs;
  }

  /** Unsettled jobs waiting behind the one in flight. */
  get queued(): number {
    let n = 0;
    for (let i = this.#head; i < this.#tail; i++) if (!(this.#queue[i] as QueueEntry).settled) n++;
    return n;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  get idle(): boolean {
    return this.running === undefined && this.loop === undefined && this.queued === 0;
  }
}

/**
 * The receipt id a turn of `job` builds its idempotency keys on (`<receiptId>:<name>`): its inbox
 * entry's, or — without an inbox — a fresh UUID made on first use and kept for the job.
 * @internal
 */
export function receiptIdOf(job: Job): string {
  return (job.receiptId ??= job.entry?.receiptId ?? randomUUID());
}

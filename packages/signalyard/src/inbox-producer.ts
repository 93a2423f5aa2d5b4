import {
  InboxError,
  outcomeFromJson,
  type Inbox,
  type InboxEntry,
  type InboxReceipt,
  type Outcome,
  type Clock,
  type SignalJson,
} from '@signalyard/core';
import { linkAbortSignals, readClock, timeOrderedUuid } from '@signalyard/core/internal';
import { closedError } from './outcomes.js';

/** Retries of one `accept` whose acknowledgement was lost (`INBOX_OUTCOME_UNKNOWN`), with the same id. */
const ACCEPT_RETRIES = 2;
/** Outcomes settled in this process kept for a late `outcome()` call here (the live `Outcome`), `outcomeTtlMs` at most. */
const LIVE_OUTCOMES = 1024;

/** One entry to accept, as the Runner checked it. @internal */
export interface AcceptRequest {
  readonly sessionKey: string;
  readonly agentId: string;
  readonly signal: SignalJson;
  readonly id: string | undefined;
  readonly control?: InboxEntry['control'];
}

/** One `outcome()` wait: how to end it from outside (close, a local settlement). */
interface Wait {
  readonly receiptId: string;
  /** Ends the wait once (later calls are ignored), stopping its inbox wait. */
  resolve(outcome: Outcome): void;
  reject(error: unknown): void;
}

/**
 * The producer half of a runner with a durable inbox: `accept` chained per session key (one
 * process's calls keep their order), retried with the same id when the acknowledgement was lost;
 * `outcome` waits, answered with the live `Outcome` when this process settled the entry, else
 * rebuilt from the inbox's `OutcomeJson`; `close` rejects every wait with `RUNNER_CLOSED`.
 * @internal
 */
export class InboxProducer {
  readonly #inbox: Inbox;
  readonly #chains = new Map<string, Promise<unknown>>();
  readonly #waits = new Set<Wait>();
  /** The live outcomes settled here, with when (the runner's clock): kept `outcomeTtlMs`, as the inbox keeps them. */
  readonly #live = new Map<string, { readonly outcome: Outcome; readonly at: number }>();
  readonly #clock: Clock;
  readonly #outcomeTtlMs: number;
  #closed = false;

  /** `clock` and `outcomeTtlMs`: the runner's, so a live outcome here expires when the inbox's does. */
  constructor(inbox: Inbox, clock: Clock, outcomeTtlMs: number) {
    this.#inbox = inbox;
    this.#clock = clock;
    this.#outcomeTtlMs = outcomeTtlMs;
  }

  /** The live outcome of `receiptId` settled here, unless `outcomeTtlMs` has passed since (then forgotten: the inbox answers `OUTCOME_EXPIRED`). */
  #liveOutcome(receiptId: string): Outcome | undefined {
    const kept = this.#live.get(receiptId);
    if (kept === undefined) return undefined;
    if (readClock(this.#clock) - kept.at < this.#outcomeTtlMs) return kept.outcome;
    this.#live.delete(receiptId);
    return undefined;
  }

  /** Accepts after every earlier `accept` of this producer for the same session key. */
  accept(request: AcceptRequest): Promise<InboxReceipt> {
    if (this.#closed) return Promise.reject(closedError());
    const key = request.sessionKey;
    const before = this.#chains.get(key);
    const run = before === undefined ? this.#acceptNow(request) : before.then(() => this.#acceptNow(request));
    const tail = run.catch(() => undefined);
    this.#chains.set(key, tail);
    void tail.then(() => {
      if (this.#chains.get(key) === tail) this.#chains.delete(key);
    });
    return run;
  }

  async #acceptNow(request: AcceptRequest): Promise<InboxReceipt> {
    const id = request.id ?? timeOrderedUuid(); // time-ordered: the inbox's dedupe index grows at one end
    const entry = {
      sessionKey: request.sessionKey,
      agentId: request.agentId,
      signal: request.signal,
      id,
      ...(request.control !== undefined && { control: request.control }),
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const receipt = await this.#inbox.accept(entry);
        // The lease holder acts on a stop at once (the accept's own notice says only "entry").
        if (request.signal.kind === 'stop') this.#inbox.notify(request.sessionKey, 'stop').catch(() => undefined);
        return receipt;
      } catch (error) {
        const lost = InboxError.isInstance(error) && error.code === 'INBOX_OUTCOME_UNKNOWN';
        if (!lost || attempt >= ACCEPT_RETRIES) throw error;
      }
    }
  }

  /**
   * The outcome of `receiptId`: the live one when this process settled it, else the inbox's
   * (from any process), rebuilt. `abortSignal` and `timeoutMs` end only this wait.
   */
  outcome(receiptId: string, opts: { abortSignal?: AbortSignal; timeoutMs?: number }): Promise<Outcome> {
    if (this.#closed) return Promise.reject(closedError());
    const live = this.#liveOutcome(receiptId);
    if (live !== undefined) return Promise.resolve(live);
    return new Promise<Outcome>((resolve, reject) => {
      const stop = new AbortController();
      let done = false;
      const end = (): boolean => {
        if (done) return false;
        done = true;
        this.#waits.delete(wait);
        stop.abort();
        return true;
      };
      const wait: Wait = {
        receiptId,
        resolve: (outcome) => {
          if (end()) resolve(outcome);
        },
        reject: (error) => {
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the inbox's own error, passed through unchanged
          if (end()) reject(error);
        },
      };
      this.#waits.add(wait);
      const abortSignal = linkAbortSignals(opts.abortSignal, stop.signal);
      const inboxOpts = {
        ...(abortSignal !== undefined && { abortSignal }),
        ...(opts.timeoutMs !== undefined && { timeoutMs: opts.timeoutMs }),
      };
      this.#inbox.outcome(receiptId, inboxOpts).then(
        (json) => {
          try {
            wait.resolve(this.#liveOutcome(receiptId) ?? outcomeFromJson(json));
          } catch (error) {
            wait.reject(error);
          }
        },
        (error: unknown) => {
          wait.reject(error);
        },
      );
    });
  }

  /** A worker of this process settled `receiptId`: its waits here resolve with the live outcome. */
  settledHere(receiptId: string, outcome: Outcome): void {
    // A Map keeps insertion order: once full, the oldest kept outcome goes (also after expiries).
    if (!this.#live.has(receiptId) && this.#live.size >= LIVE_OUTCOMES)
      this.#live.delete(this.#live.keys().next().value as string);
    this.#live.set(receiptId, { outcome, at: readClock(this.#clock) });
    if (this.#waits.size === 0) return; // a worker's own process usually waits for none
    for (const wait of [...this.#waits]) if (wait.receiptId === receiptId) wait.resolve(outcome);
  }

  /** Rejects every pending wait with `RUNNER_CLOSED`; later calls reject with it too. */
  close(): void {
    this.#closed = true;
    for (const wait of [...this.#waits]) wait.reject(closedError());
  }
}

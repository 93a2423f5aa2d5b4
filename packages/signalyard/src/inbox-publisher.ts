import { InboxError, type Inbox, type InboxSettleEvents, type Outcome, type TurnEvent } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';

/** The most events one write takes. */
const MAX_BATCH = 256;

/**
 * Publishes one inbox entry's turn events to its receipt's stream log (inbox.md "Streams from any
 * worker"), for the delivery that applies it: every event the turn streams, in order, except the
 * `outcome` — published by {@link EntryPublisher.finish} once the settling save is done, so a
 * reader never sees an outcome that a later attempt replaces. A delivery after the first
 * publishes `{ type: 'restarted', attempt }` first (readers skip a marker that voids nothing).
 *
 * Writes never hold the turn up: events are queued and written in order by one drain loop; while
 * a write is in flight the events arriving meanwhile wait, and go next together in one write
 * (`Inbox.publishMany`, when the transport has it): a fast model costs one round trip per batch,
 * not per delta. The `routed` event waits for the turn's next event, so a turn that streams
 * nothing publishes once, with its outcome (beside the outcome's own write). A write
 * that fails is reported once (`warn`) and dropped; once the entry is no longer in the inbox
 * (`LEASE_LOST`: another worker settled it) or the delivery is abandoned, nothing more is written.
 * @internal
 */
export class EntryPublisher {
  readonly #inbox: Inbox;
  readonly #receiptId: string;
  readonly #warn: (message: string) => void;
  /** The delivery's count, once begun; events before it wait. */
  #attempt: number | undefined;
  #queue: TurnEvent[] = [];
  #draining: Promise<void> | undefined;
  #stopped = false;
  /** Abandoned (lease lost, or the entry gone): nothing more is written, not even with the outcome. */
  #abandoned = false;
  #warned = false;

  constructor(inbox: Inbox, receiptId: string, warn: (message: string) => void) {
    this.#inbox = inbox;
    this.#receiptId = receiptId;
    this.#warn = warn;
  }

  /** The turn's sink: each event but the `outcome` is queued for publishing. */
  readonly sink = (event: TurnEvent): void => {
    if (event.type === 'outcome' || this.#stopped) return;
    if (event.type === 'routed' && this.#queue.length === 0 && this.#draining === undefined) {
      // Held until the turn's next event (or its outcome) and written with it: a turn that
      // streams nothing costs no write of its own, one that streams loses nothing.
      this.#queue.push(event);
      return;
    }
    this.#push(event);
  };

  /** The delivery began (its durable count): a redelivery publishes `restarted` first. */
  begin(attempt: number): void {
    if (this.#attempt !== undefined || this.#stopped) return;
    this.#attempt = attempt;
    if (attempt > 1) this.#queue.unshift({ type: 'restarted', attempt });
    this.#kick();
  }

  /**
   * The entry is settled: publishes its `outcome` after every event queued, and resolves once all
   * are written (or dropped). A delivery never begun here publishes under the entry's count.
   */
  finish(outcome: Outcome, fallbackAttempt: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#attempt ??= Math.max(1, fallbackAttempt);
    this.#push({ type: 'outcome', outcome });
    this.#stopped = true;
    return this.#written();
  }

  /**
   * The entry is being settled with `Inbox.settle`: stops taking events, waits for the write in
   * flight (the events queued meanwhile are not written by it) and hands over what is still
   * queued followed by the `outcome` event, to be written with the outcome in one write.
   * `undefined` once the delivery was abandoned (nothing more is written for it).
   */
  async take(outcome: Outcome, fallbackAttempt: number): Promise<InboxSettleEvents | undefined> {
    if (this.#stopped) return undefined;
    this.#stopped = true;
    const rest = this.#queue;
    this.#queue = [];
    await this.#written();
    if (this.#abandoned) return undefined;
    const attempt = this.#attempt ?? Math.max(1, fallbackAttempt);
    return { attempt, events: [...rest, { type: 'outcome', outcome }] };
  }

  /** Resolves once nothing is queued or being written (a drain ending re-kicks for what came meanwhile). */
  async #written(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
  }

  /** The delivery is given up (its lease lost): nothing more is written. */
  abandon(): void {
    this.#stopped = true;
    this.#abandoned = true;
    this.#queue = [];
  }

  #push(event: TurnEvent): void {
    this.#queue.push(event);
    this.#kick();
  }

  #kick(): void {
    if (this.#draining !== undefined || this.#attempt === undefined || this.#queue.length === 0) return;
    this.#draining = this.#drain().finally(() => {
      this.#draining = undefined;
      // An event queued while the drain was ending (its loop saw an empty queue) is written now.
      this.#kick();
    });
  }

  async #drain(): Promise<void> {
    const attempt = this.#attempt as number;
    while (this.#queue.length > 0) {
      const events = this.#queue.splice(0, MAX_BATCH);
      try {
        await this.#write(attempt, events);
      } catch (error) {
        if (InboxError.isInstance(error) && (error.code === 'LEASE_LOST' || error.code === 'INBOX_CLOSED')) {
          this.abandon();
          return;
        }
        if (!this.#warned) {
          this.#warned = true;
          this.#warn(`inbox stream of receipt ${JSON.stringify(this.#receiptId)}: publish failed: ${errorText(error)}`);
        }
      }
    }
  }

  /** One write of everything queued: `publishMany` when the inbox has it, else one event at a time. */
  async #write(attempt: number, events: readonly TurnEvent[]): Promise<void> {
    const inbox = this.#inbox;
    if (events.length > 1 && inbox.publishMany !== undefined) {
      await inbox.publishMany(this.#receiptId, attempt, events);
      return;
    }
    for (const event of events) await inbox.publish(this.#receiptId, attempt, event);
  }
}

import type {
  ConsumerConfig,
  ConsumerMessages,
  JetStreamClient,
  JetStreamManager,
  JsMsg,
  MsgRequest,
} from '@nats-io/jetstream';
import { isApiCode } from './jetstream-errors.js';

/**
 * The most entries a holder keeps pulled and unacknowledged. The rest of the partition waits in
 * the stream undelivered (acknowledged, if settled before it is pulled, by deleting it): a new
 * holder does not draw the whole backlog at once (up to the consumer's 1,000 pending), nor keep
 * it all alive with `working()`.
 */
const MAX_PULLED = 128;
/** A pull asks for at least this many (it waits for acknowledgements to make the room). */
const FETCH_MIN = 32;
/** How long one pull waits for messages when none are there (ms). */
const FETCH_EXPIRES_MS = 1000;
/**
 * After how many keep-alive ticks (`leaseMs`/3 each) a pulled entry that no key lease of this
 * process reads is looked up in the stream (another process may have settled it: it acknowledges
 * by deleting the message, which this consumer is not told of), and how long one found there is
 * not looked up again.
 */
const STALE_TICKS = 3;
/** The most look-ups one tick sends (each tells the next entry still stored in the partition). */
const STALE_LOOKUPS = 8;
/** The most entries one tick considers for a look-up. */
const STALE_SCAN = 256;

/**
 * What a worker process does for a partition it holds: (re)creates the partition's durable pull
 * consumer (so it starts after the ack floor: acknowledged entries are gone from the work-queue
 * stream), pulls its entries, keeps every delivered and unacknowledged one alive with `working()`
 * every `leaseMs`/3, and acknowledges them after the settling save. It never naks. A redelivery
 * seen while holding (another holder's consumer, or this one's `ack_wait` passed), a consumer
 * that vanished (another holder recreated it) or a partition lease that could not be renewed
 * marks the partition lost: this process's key leases in it stop renewing and reading
 * (`LEASE_LOST`).
 * @internal
 */
export class PartitionHolder {
  /** The partition lease's token this holder serves. */
  readonly token: string;
  /** Delivered, unacknowledged messages, by stream sequence. */
  readonly #messages = new Map<number, JsMsg>();
  #lost = false;
  #stopped = false;
  #pull: ConsumerMessages | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Since when (local ms) this process holds no key lease in the partition, and what then retires the holder; `undefined` while it holds one. */
  #idle: { readonly since: number; readonly retire: () => void } | undefined;
  /** Wakes the pulling loop waiting for room. */
  #room: (() => void) | undefined;
  #lingerMs = 0;
  /** The highest stream sequence pulled (deliveries come in stream order). */
  #lastSeq = 0;
  /** Keep-alive ticks so far. */
  #tick = 0;
  /** `#lastSeq` at each of the last `STALE_TICKS` ticks, oldest first. */
  readonly #marks: number[] = [];
  /** Entries found still stored, by sequence: the tick before which they are not looked up again. */
  readonly #checked = new Map<number, number>();
  /** The next message stored in the partition at or after a sequence (`undefined`: none); set by `start`. */
  #nextStored: ((seq: number) => Promise<number | undefined>) | undefined;
  #sweeping = false;

  readonly #renew: () => Promise<boolean>;
  readonly #reading: (subject: string) => boolean;

  /**
   * `renew` renews the partition lease (false: lost); it runs every `leaseMs`/3 with the
   * `working()` calls. `reading(subject)` tells whether a key lease of this process covers the
   * key subject (its entries are settled here: they are not looked up, see {@link PartitionHolder.start}).
   */
  constructor(token: string, renew: () => Promise<boolean>, reading: (subject: string) => boolean) {
    this.token = token;
    this.#renew = renew;
    this.#reading = reading;
  }

  /** Whether a redelivery or a vanished consumer showed that someone else held the partition. */
  get lost(): boolean {
    return this.#lost;
  }

  /**
   * Recreates the consumer, then pulls in the background until {@link PartitionHolder.stop}.
   *
   * Pulled entries of keys another process settles (a key of the partition leased elsewhere, or
   * taken over) are acknowledged by that process deleting them from the stream: the consumer does
   * not tell this one. Every tick, the entries pulled `STALE_TICKS` ticks ago or more that no key
   * lease here reads are looked up (a few requests to the stream's leader, each answering the
   * partition's next stored message at or after a sequence: a run of gone entries costs one), and
   * the gone ones dropped, so that they neither take the pull's room nor get `working()` for ever.
   * An entry still stored is kept (a wrong "gone" would only cost its redelivery, which marks the
   * partition lost; the leader's answer is never wrong that way).
   */
  async start(
    js: JetStreamClient,
    jsm: JetStreamManager,
    stream: string,
    config: Partial<ConsumerConfig>,
    leaseMs: number,
  ): Promise<void> {
    const name = config.durable_name as string;
    this.#lingerMs = leaseMs;
    try {
      await jsm.consumers.delete(stream, name);
    } catch (error) {
      if (!isApiCode(error, 10014)) throw error;
    }
    const { created } = await jsm.consumers.add(stream, config);
    const consumer = await js.consumers.get(stream, name);
    const filter = config.filter_subject as string;
    // Asked of the stream's leader (a lagging replica could miss a message, and "gone" must not be
    // a replica's lag). The server takes `next_by_subj` here since 2.9; the client's type omits it.
    const next = (seq: number): MsgRequest => ({ next_by_subj: filter, seq }) as unknown as MsgRequest;
    this.#nextStored = async (seq) => (await jsm.streams.getMessage(stream, next(seq)))?.seq;
    this.#timer = setInterval(
      () => {
        this.#keepAlive();
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    this.#timer.unref();
    void (async () => {
      while (this.#pulling()) {
        if (MAX_PULLED - this.#messages.size < FETCH_MIN) await this.#roomOrTimeout();
        if (!this.#pulling()) break;
        // Still no room after a pull's time: a pull of one all the same, so that a consumer gone
        // (or recreated by another holder) is noticed as before, at the cost of one more pulled entry.
        const room = Math.max(1, MAX_PULLED - this.#messages.size);
        try {
          this.#pull = await consumer.fetch({ max_messages: room, expires: FETCH_EXPIRES_MS });
          for await (const message of this.#pull) this.#delivered(message);
        } catch {
          // A pull can fail for passing reasons (missed heartbeats on a busy machine, a reconnect);
          // the partition is lost only when its consumer is gone or is another holder's (recreated).
          const now = await jsm.consumers.info(stream, name).then(
            (info) => info.created,
            (error: unknown) => (isApiCode(error, 10014) ? 'gone' : created),
          );
          if (now !== created) this.#lost ||= !this.#stopped;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    })();
  }

  #delivered(message: JsMsg): void {
    if (this.#stopped) return;
    if (message.info.deliveryCount > 1) {
      this.#lost = true; // a redelivery while holding: another holder existed, or we stalled past ack_wait
      return;
    }
    this.#messages.set(message.seq, message);
    this.#lastSeq = message.seq;
  }

  /**
   * This process released its last key lease in the partition: the holder keeps pulling and
   * renewing for `leaseMs` more (a key of the partition leased again meanwhile reuses the
   * consumer instead of recreating it, which would deliver the partition's entries again), then
   * `retire` stops it and gives the partition up.
   */
  idle(retire: () => void): void {
    this.#idle ??= { since: Date.now(), retire };
  }

  /** A key lease in the partition is held here again. */
  busy(): void {
    this.#idle = undefined;
  }

  #keepAlive(): void {
    if (this.#lost) return;
    if (this.#idle !== undefined && Date.now() - this.#idle.since >= this.#lingerMs) {
      this.#idle.retire();
      return;
    }
    for (const message of this.#messages.values()) message.working();
    this.#tick += 1;
    this.#marks.push(this.#lastSeq);
    if (this.#marks.length > STALE_TICKS) this.#lookUpStale(this.#marks.shift() as number);
    this.#renew().then(
      (held) => {
        if (!held && !this.#stopped) this.#lost = true;
      },
      () => undefined, // the server is unreachable: the next tick tries again, the lease expires meanwhile
    );
  }

  /** Looks up (in the background, one sweep at a time) the entries pulled up to `oldest` that no key lease here reads. */
  #lookUpStale(oldest: number): void {
    if (this.#sweeping || this.#nextStored === undefined) return;
    const candidates: number[] = [];
    for (const [seq, message] of this.#messages) {
      if (seq > oldest || candidates.length >= STALE_SCAN) break; // pulled in stream order
      if ((this.#checked.get(seq) ?? 0) > this.#tick || this.#reading(message.subject)) continue;
      candidates.push(seq);
    }
    if (candidates.length === 0) return;
    this.#sweeping = true;
    this.#dropGone(candidates, this.#nextStored)
      .catch(() => undefined) // the server is unreachable or slow: the next tick looks again
      .finally(() => {
        this.#sweeping = false;
      });
  }

  /** Drops the `candidates` (ascending sequences) no longer in the stream, with at most `STALE_LOOKUPS` requests. */
  async #dropGone(candidates: number[], nextStored: (seq: number) => Promise<number | undefined>): Promise<void> {
    let i = 0;
    for (let asked = 0; asked < STALE_LOOKUPS && i < candidates.length && this.#pulling(); asked++) {
      const next = await nextStored(candidates[i] as number);
      for (; i < candidates.length && (next === undefined || (candidates[i] as number) < next); i++) {
        this.#drop(candidates[i] as number);
      }
      if (next !== undefined && candidates[i] === next) {
        this.#checked.set(next, this.#tick + STALE_TICKS);
        i += 1;
      }
    }
    for (const seq of this.#checked.keys()) if (!this.#messages.has(seq)) this.#checked.delete(seq);
    if (MAX_PULLED - this.#messages.size >= FETCH_MIN) this.#wake();
  }

  /**
   * Forgets an entry another process settled (deleted from the stream: the server took it out of
   * the consumer's pending ones then). Nothing is sent: were it still stored after all, its
   * redelivery would mark the partition lost, where an ack would have removed an unsettled entry.
   */
  #drop(seq: number): void {
    if (this.#stopped || this.#lost) return;
    this.#messages.delete(seq);
    this.#checked.delete(seq);
  }

  /** Whether this holder pulled the entry at `seq` and has not acknowledged it (then it is in the stream, unless another process deleted it). */
  has(seq: number): boolean {
    return !this.#lost && this.#messages.has(seq);
  }

  /** Acknowledges the entry at `seq` through the consumer (the work-queue stream removes it); false when this holder has not pulled it. */
  async ack(seq: number): Promise<boolean> {
    const message = this.#messages.get(seq);
    if (message === undefined || this.#lost) return false;
    this.#messages.delete(seq);
    if (MAX_PULLED - this.#messages.size >= FETCH_MIN) this.#wake();
    return message.ackAck();
  }

  #pulling(): boolean {
    return !this.#stopped && !this.#lost;
  }

  /** Resolves once acknowledgements made room for a pull, or after a pull's time (`FETCH_EXPIRES_MS`). */
  #roomOrTimeout(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#room = undefined;
        resolve();
      }, FETCH_EXPIRES_MS);
      this.#room = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  #wake(): void {
    const room = this.#room;
    this.#room = undefined;
    room?.();
  }

  /** Stops pulling and keeping messages alive (the next holder's consumer delivers them again). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#pull?.stop();
    this.#messages.clear();
    this.#checked.clear();
    this.#wake();
  }
}

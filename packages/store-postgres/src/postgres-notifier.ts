import type { Pool } from 'pg';

/** The most payloads one `pg_notify` statement carries. */
const BATCH = 1000;

/**
 * Sends an inbox's notifications after the writes they announce committed, never inside them:
 * PostgreSQL serialises the commits of transactions that `NOTIFY` (a lock held through commit,
 * its WAL flush included), so a `pg_notify` inside every accept would let only one accept commit
 * at a time. One statement is in flight at a time (`pg_notify` over an array): the payloads asked
 * for meanwhile — and those of the same tick — go out together in the next one, so a busy worker
 * or producer sends one notification round trip per round trip's worth of writes, not one per
 * write. A process that dies between a commit and its notification leaves that wake-up to
 * polling, as the inbox's rules allow (a lost notification delays, never loses).
 * @internal
 */
export class PostgresNotifier {
  readonly #pool: Pool;
  readonly #channel: string;
  #queue: string[] = [];
  #waiting: ((error: unknown) => void)[] = [];
  /** The loop sending batches, while there is anything to send. */
  #pump: Promise<void> | undefined;

  constructor(pool: Pool, channel: string) {
    this.#pool = pool;
    this.#channel = channel;
  }

  /** Queues `payload`; resolves once the batch it joined was sent (with `undefined`) or failed to be (with the error); never rejects. */
  send(payload: string): Promise<unknown> {
    this.#queue.push(payload);
    const sent = new Promise<unknown>((resolve) => this.#waiting.push(resolve));
    this.#pump ??= this.#run();
    return sent;
  }

  /** Sends batches until nothing is queued: the first after this tick, each next one after the one before. */
  async #run(): Promise<void> {
    await Promise.resolve(); // what the same tick asks for joins the first batch
    while (this.#queue.length > 0) {
      const payloads = this.#queue.splice(0, BATCH);
      const waiting = this.#waiting.splice(0, payloads.length);
      const error = await this.#pool
        .query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [this.#channel, payloads])
        .then(
          () => undefined,
          (failure: unknown) => failure, // the listeners' polling finds what this would have announced
        );
      for (const resolve of waiting) resolve(error);
    }
    this.#pump = undefined;
  }

  /** Resolves once every send under way is done. */
  async drained(): Promise<void> {
    while (this.#pump !== undefined) await this.#pump;
  }
}

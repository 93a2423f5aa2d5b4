import type { Pool } from 'pg';

/**
 * Sends an inbox's notifications after the writes they announce committed, never inside them:
 * PostgreSQL serialises the commits of transactions that `NOTIFY` (a lock held through commit,
 * its WAL flush included), so a `pg_notify` inside every accept would let only one accept commit
 * at a time. The payloads asked for before the next microtask go out in one statement
 * (`pg_notify` over an array); a process that dies between a commit and its notification leaves
 * that wake-up to polling, as the inbox's rules allow (a lost notification delays, never loses).
 * @internal
 */
export class PostgresNotifier {
  readonly #pool: Pool;
  readonly #channel: string;
  #queue: string[] = [];
  #sending: Promise<unknown> | undefined;
  /** Sends still under way (close() waits for them). */
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(pool: Pool, channel: string) {
    this.#pool = pool;
    this.#channel = channel;
  }

  /** Queues `payload`; resolves once the batch it joined was sent (with `undefined`) or failed to be (with the error); never rejects. */
  send(payload: string): Promise<unknown> {
    this.#queue.push(payload);
    this.#sending ??= new Promise<unknown>((resolve) => {
      queueMicrotask(() => {
        const payloads = this.#queue;
        this.#queue = [];
        this.#sending = undefined;
        const sent = this.#pool
          .query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [this.#channel, payloads])
          .then(
            () => undefined,
            (error: unknown) => error, // the listeners' polling finds what this would have announced
          );
        this.#inFlight.add(sent);
        void sent.then((error) => {
          this.#inFlight.delete(sent);
          resolve(error);
        });
      });
    });
    return this.#sending;
  }

  /** Resolves once every send under way is done. */
  async drained(): Promise<void> {
    while (this.#sending !== undefined || this.#inFlight.size > 0) {
      await (this.#sending ?? Promise.all(this.#inFlight));
    }
  }
}

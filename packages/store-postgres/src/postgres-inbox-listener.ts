import { startTimer } from '@signalyard/core/internal';
import type { Notification, Pool, PoolClient } from 'pg';

/** What an {@link InboxListener} tells its inbox. @internal */
export interface ListenTarget {
  /** A notification's payload (ids only: `e<key>`, `s<key>`, `o<receipt>`, `v<receipt>`). */
  notification(payload: string): void;
  /** Every wait should look again: the connection was (or just became) up, or down, or it is time for a safety look. */
  wakeAll(): void;
  /** The connection came back after being lost: notifications may have been missed meanwhile. */
  reconnected(): void;
}

/** How many poll intervals pass between two safety looks while listening. */
const SAFETY_EVERY = 10;

/**
 * The inbox's `LISTEN` connection: one connection of the pool, held from the first wait until
 * `stop()`. Notifications carry ids only and wake the waits they concern. When the connection is
 * lost (`pg_terminate_backend`, a restart, the network), waits are woken every `pollMs` to look
 * for themselves (polling) while it reconnects; once it listens again, every wait looks once more
 * and the inbox is told (`reconnected`), so a lost notification delays, never loses. While
 * listening, every wait also looks every {@link SAFETY_EVERY} × `pollMs`. Timers never keep the
 * process alive.
 * @internal
 */
export class InboxListener {
  readonly #pool: Pool;
  readonly #channel: string;
  readonly #pollMs: number;
  readonly #target: ListenTarget;
  #client: PoolClient | undefined;
  #started = false;
  #stopped = false;
  #connecting = false;
  #everListened = false;
  #cancelTimer: (() => void) | undefined;
  /** Resolves when the first `LISTEN` succeeded (or the listener stopped). */
  #listening: Promise<void>;
  #markListening: () => void = noop;

  constructor(pool: Pool, channel: string, pollMs: number, target: ListenTarget) {
    this.#pool = pool;
    this.#channel = channel;
    this.#pollMs = pollMs;
    this.#target = target;
    this.#listening = new Promise((resolve) => {
      this.#markListening = resolve;
    });
  }

  /** Starts listening (idempotent). */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    void this.#connect();
  }

  /** Resolves once listening (for a caller that must not miss what follows). */
  ready(): Promise<void> {
    this.start();
    return this.#listening;
  }

  /** True while the `LISTEN` connection is up. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  /** Stops listening and gives the connection back (closed: its state is the listener's). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancelTimer?.();
    this.#markListening();
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) {
      client.removeAllListeners('notification');
      client.release(true);
    }
  }

  /** Whether `stop()` was called (a method: it changes across awaits). */
  #isStopped(): boolean {
    return this.#stopped;
  }

  async #connect(): Promise<void> {
    if (this.#connecting || this.#stopped) return;
    this.#connecting = true;
    let client: PoolClient | undefined;
    try {
      client = await this.#pool.connect();
      client.on('error', () => {
        this.#lost(client as PoolClient);
      });
      client.on('end', () => {
        this.#lost(client as PoolClient);
      });
      client.on('notification', (message: Notification) => {
        if (message.channel === this.#channel && message.payload !== undefined)
          this.#target.notification(message.payload);
      });
      await client.query(`LISTEN "${this.#channel}"`);
    } catch {
      if (client !== undefined) client.release(true);
      this.#connecting = false;
      this.#schedule(); // polling meanwhile; the next tick tries again
      return;
    }
    this.#connecting = false;
    if (this.#isStopped()) {
      client.release(true); // stopped while connecting
      return;
    }
    this.#client = client;
    this.#markListening();
    // what changed before the LISTEN took effect was not notified: every wait looks once more
    this.#target.wakeAll();
    if (this.#everListened) this.#target.reconnected();
    this.#everListened = true;
    this.#schedule();
  }

  /** The connection failed or ended: poll until a new one listens. */
  #lost(client: PoolClient): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.removeAllListeners('notification');
    client.release(true);
    if (this.#stopped) return;
    this.#target.wakeAll();
    this.#schedule();
  }

  /** The next tick: a poll (and a reconnect attempt) while down, a safety look while up. */
  #schedule(): void {
    this.#cancelTimer?.();
    if (this.#stopped) return;
    const up = this.#client !== undefined;
    this.#cancelTimer = startTimer(
      up ? this.#pollMs * SAFETY_EVERY : this.#pollMs,
      () => {
        this.#cancelTimer = undefined;
        this.#target.wakeAll();
        if (this.#client === undefined) void this.#connect();
        else this.#schedule();
      },
      { unref: true },
    );
  }
}

function noop(): void {
  // replaced in the constructor
}

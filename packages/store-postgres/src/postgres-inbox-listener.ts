import { startTimer } from '@signalyard/core/internal';
import { Client, type ClientBase, type Notification, type Pool } from 'pg';

/** What an {@link InboxListener} tells its inbox. @internal */
export interface ListenTarget {
  /** A notification's payload (ids only: `e<key>`, `s<key>`, `o<receipt>`, `v<receipt>`). */
  notification(payload: string): void;
  /** Every wait should look again: the connection was (or just became) up, or down, or it is time for a safety look. */
  wakeAll(): void;
  /** The connection came back after being lost: notifications may have been missed meanwhile. */
  reconnected(): void;
}

/** A `LISTEN` connection and how to give it up (it is never reused: its state is the listener's). */
interface ListenConnection {
  readonly client: ClientBase;
  close(): void;
}

/** Opens a `LISTEN` connection. */
type ListenConnector = () => Promise<ListenConnection>;

/** `LISTEN` connections taken from `pool`, destroyed when given up. @internal */
export function poolConnector(pool: Pool): ListenConnector {
  return async () => {
    const client = await pool.connect();
    return {
      client,
      close: () => {
        client.release(true);
      },
    };
  };
}

/**
 * `LISTEN` connections of their own, opened from `connectionString` (`listenConnectionString`:
 * a session when the pool goes through a transaction-mode pooler), ended when given up. @internal
 */
export function ownConnector(connectionString: string): ListenConnector {
  return async () => {
    const client = new Client({ connectionString });
    // An error after it is given up (the server going away) must not crash the process.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      client.end().catch(() => undefined);
      throw error;
    }
    return {
      client,
      close: () => {
        client.end().catch(() => undefined);
      },
    };
  };
}

/** How many poll intervals pass between two safety looks while listening. */
const SAFETY_EVERY = 10;

/**
 * The inbox's `LISTEN` connection: one connection of the pool (or one of its own, see
 * {@link ownConnector}), held from the first wait until
 * `stop()`. Notifications carry ids only and wake the waits they concern. When the connection is
 * lost (`pg_terminate_backend`, a restart, the network), waits are woken every `pollMs` to look
 * for themselves (polling) while it reconnects; once it listens again, every wait looks once more
 * and the inbox is told (`reconnected`), so a lost notification delays, never loses. While
 * listening, every wait also looks every {@link SAFETY_EVERY} × `pollMs`. Timers never keep the
 * process alive.
 * @internal
 */
export class InboxListener {
  readonly #connector: ListenConnector;
  readonly #channel: string;
  readonly #pollMs: number;
  readonly #target: ListenTarget;
  #connection: ListenConnection | undefined;
  #started = false;
  #stopped = false;
  #connecting = false;
  #everListened = false;
  #cancelTimer: (() => void) | undefined;
  /** Resolves when the first `LISTEN` succeeded (or the listener stopped). */
  #listening: Promise<void>;
  #markListening: () => void = noop;

  constructor(connector: ListenConnector, channel: string, pollMs: number, target: ListenTarget) {
    this.#connector = connector;
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
    return this.#connection !== undefined;
  }

  /** Stops listening and gives the connection back (closed: its state is the listener's). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancelTimer?.();
    this.#markListening();
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection !== undefined) {
      connection.client.removeAllListeners('notification');
      connection.close();
    }
  }

  /** Whether `stop()` was called (a method: it changes across awaits). */
  #isStopped(): boolean {
    return this.#stopped;
  }

  async #connect(): Promise<void> {
    if (this.#connecting || this.#stopped) return;
    this.#connecting = true;
    let connection: ListenConnection | undefined;
    try {
      connection = await this.#connector();
      const opened = connection;
      const { client } = opened;
      client.on('error', () => {
        this.#lost(opened);
      });
      client.on('end', () => {
        this.#lost(opened);
      });
      client.on('notification', (message: Notification) => {
        if (message.channel === this.#channel && message.payload !== undefined)
          this.#target.notification(message.payload);
      });
      await client.query(`LISTEN "${this.#channel}"`);
    } catch {
      connection?.close();
      this.#connecting = false;
      this.#schedule(); // polling meanwhile; the next tick tries again
      return;
    }
    this.#connecting = false;
    if (this.#isStopped()) {
      connection.close(); // stopped while connecting
      return;
    }
    this.#connection = connection;
    this.#markListening();
    // what changed before the LISTEN took effect was not notified: every wait looks once more
    this.#target.wakeAll();
    if (this.#everListened) this.#target.reconnected();
    this.#everListened = true;
    this.#schedule();
  }

  /** The connection failed or ended: poll until a new one listens. */
  #lost(connection: ListenConnection): void {
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    connection.client.removeAllListeners('notification');
    connection.close();
    if (this.#stopped) return;
    this.#target.wakeAll();
    this.#schedule();
  }

  /** The next tick: a poll (and a reconnect attempt) while down, a safety look while up. */
  #schedule(): void {
    this.#cancelTimer?.();
    if (this.#stopped) return;
    const up = this.#connection !== undefined;
    this.#cancelTimer = startTimer(
      up ? this.#pollMs * SAFETY_EVERY : this.#pollMs,
      () => {
        this.#cancelTimer = undefined;
        this.#target.wakeAll();
        if (this.#connection === undefined) void this.#connect();
        else this.#schedule();
      },
      { unref: true },
    );
  }
}

function noop(): void {
  // replaced in the constructor
}

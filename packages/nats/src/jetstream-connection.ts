import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { ResolvedJetStreamInboxOptions } from './jetstream-inbox-options.js';

/**
 * One inbox's connection: the client's (reconnects are the client library's), the JetStream
 * handles over it, whether it is up now (accepts fail fast while it is down), and the server's
 * clock as estimated from a KV write's timestamp.
 * @internal
 */
export class InboxConnection {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly kvm: Kvm;
  readonly #owned: boolean;
  readonly #subscriptions: Subscription[] = [];
  #up = true;
  #skewMs = 0;

  private constructor(nc: NatsConnection, jsm: JetStreamManager, owned: boolean) {
    this.nc = nc;
    this.jsm = jsm;
    this.js = jetstream(nc);
    this.kvm = new Kvm(this.js);
    this.#owned = owned;
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect') this.#up = false;
        else if (status.type === 'reconnect') this.#up = true;
      }
    })().catch(() => undefined);
  }

  /** Connects (or adopts the given connection). */
  static async open(o: ResolvedJetStreamInboxOptions): Promise<InboxConnection> {
    const owned = o.connection === undefined;
    // noAsyncTraces: without it the client builds two Errors (stack traces) per request, a third of
    // an accept's CPU; a caller who wants the traces passes noAsyncTraces: false.
    const nc = o.connection ?? (await connect({ noAsyncTraces: true, ...o.connectOptions, servers: o.servers }));
    return new InboxConnection(nc, await jetstreamManager(nc), owned);
  }

  /** Whether the client is connected now. */
  isUp(): boolean {
    return this.#up && !this.nc.isClosed();
  }

  /** The server's time now, as this process estimates it (epoch ms). */
  now(): number {
    return Date.now() + this.#skewMs;
  }

  /** Sets the clock offset from a write made between `before` and `after` (local ms) that the server stamped `stamped`. */
  calibrate(before: number, after: number, stamped: number): void {
    this.#skewMs = stamped - (before + after) / 2;
  }

  /** Subscribes to a core subject for as long as the connection is open here. */
  subscribe(subject: string, onMessage: (data: Uint8Array, header: string | undefined) => void): void {
    const subscription = this.nc.subscribe(subject, {
      callback: (error, message) => {
        if (error === null) onMessage(message.data, message.headers?.get('Sy-Receipt'));
      },
    });
    this.#subscriptions.push(subscription);
  }

  /** Ends the subscriptions, and the connection when the inbox opened it. */
  async close(): Promise<void> {
    for (const subscription of this.#subscriptions) subscription.unsubscribe();
    if (this.#owned) await this.nc.close();
  }
}

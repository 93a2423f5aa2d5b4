import type { InboxNotice } from '@signalyard/core';
import { InboxWakeups } from '@signalyard/core/internal';
import type { Ready } from './jetstream-inbox-parts.js';

/** The most session keys one notice of new entries carries (a message stays far below the server's max_payload). */
const NOTICE_KEYS = 500;

/**
 * The core NATS subjects of one inbox instance (not stored): notices for `onNotify` listeners
 * (`<stream>_NOTICES`), wake-ups of `outcome()` and `events()` waiters when an outcome is put or
 * an entry acknowledged (`<stream>_SETTLED`) or an event published (`<stream>_EVENTS.*`, the
 * events stream's own subjects, heard as they are stored), and a poller every `pollMs` in case a
 * wake-up was lost. Subscriptions start on first use.
 * @internal
 */
export class InboxSignals {
  readonly wakeups: InboxWakeups;
  readonly #listeners = new Set<(sessionKey: string, what: InboxNotice) => void>();
  /** Session keys accepted since the last notice went out. */
  readonly #entries = new Set<string>();
  readonly #ready: () => Promise<Ready>;
  readonly #pollMs: number;
  #listening = false;
  #watching = false;
  #closed = false;
  #poll: ReturnType<typeof setInterval> | undefined;

  constructor(ready: () => Promise<Ready>, pollMs: number) {
    this.#ready = ready;
    this.#pollMs = pollMs;
    this.wakeups = new InboxWakeups(() => {
      this.#watch();
    });
  }

  /**
   * Tells every listener of every instance that `sessionKey` has a new entry (best effort): the
   * keys accepted within one turn of the event loop go out together, once each, in one message
   * (at thousands of accepts per second, one message per accept would reach every worker).
   */
  entry(r: Ready, sessionKey: string): void {
    this.#entries.add(sessionKey);
    if (this.#entries.size >= NOTICE_KEYS) this.#sendEntries(r);
    else if (this.#entries.size === 1)
      setImmediate(() => {
        this.#sendEntries(r);
      });
  }

  #sendEntries(r: Ready): void {
    if (this.#entries.size === 0) return;
    const keys = [...this.#entries];
    this.#entries.clear();
    try {
      r.c.nc.publish(r.names.notices, JSON.stringify({ ks: keys, w: 'entry' }));
    } catch {
      // best effort: workers poll
    }
  }

  /** Wakes the waiters of `receiptId`, here and in every instance (best effort). */
  settled(r: Ready, receiptId: string): void {
    this.wakeups.wake(receiptId);
    try {
      r.c.nc.publish(r.names.settled, receiptId);
    } catch {
      // best effort: waiters poll
    }
  }

  /** Adds a listener; returns the unsubscribe function. */
  listen(listener: (sessionKey: string, what: InboxNotice) => void): () => void {
    if (this.#closed) return () => undefined;
    this.#listeners.add(listener);
    if (!this.#listening) {
      this.#listening = true;
      void this.#ready()
        .then((r) => {
          if (this.#closed) return;
          const decoder = new TextDecoder();
          r.c.subscribe(r.names.notices, (data) => {
            // `{ k, w }` from notify(), `{ ks, w }` from accepts
            const { k, ks, w } = JSON.parse(decoder.decode(data)) as { k?: string; ks?: string[]; w: InboxNotice };
            for (const key of ks ?? (k === undefined ? [] : [k]))
              for (const each of [...this.#listeners]) {
                try {
                  each(key, w);
                } catch {
                  // a listener that throws does not stop the others
                }
              }
          });
        })
        .catch(() => {
          this.#listening = false;
        });
    }
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #watch(): void {
    if (this.#poll === undefined) {
      this.#poll = setInterval(() => {
        if (this.wakeups.size > 0) this.wakeups.wakeAll();
      }, this.#pollMs);
      this.#poll.unref();
    }
    if (this.#watching) return;
    this.#watching = true;
    void this.#ready()
      .then((r) => {
        if (this.#closed) return;
        const decoder = new TextDecoder();
        r.c.subscribe(r.names.settled, (data) => {
          this.wakeups.wake(decoder.decode(data));
        });
        r.c.subscribe(`${r.names.events}.*`, (_, receiptId) => {
          if (receiptId !== undefined) this.wakeups.wake(receiptId);
        });
      })
      .catch(() => {
        this.#watching = false;
      });
  }

  /** Rejects every wait with `error`, drops the listeners and stops polling. */
  close(error: unknown): void {
    this.#closed = true;
    this.wakeups.close(error);
    if (this.#poll !== undefined) clearInterval(this.#poll);
    this.#listeners.clear();
  }
}

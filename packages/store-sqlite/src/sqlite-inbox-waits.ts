import type { InboxNotice } from '@signalyard/core';
import { EventChannel, InboxWakeups } from '@signalyard/core/internal';
import type { InboxStatements } from './sqlite-inbox-statements.js';
import { SqlitePeers, SqlitePoller, type SqlitePeer } from './sqlite-inbox-watch.js';

/**
 * A {@link SqliteInbox}'s waiting side (`outcome()`, `events()`, `onNotify`): what this process
 * writes wakes the waits of every inbox of the process on the file at once ({@link SqlitePeers}),
 * and what other processes write is found by polling the file every `pollMs` while anything
 * waits ({@link SqlitePoller}).
 * @internal
 */
export class SqliteInboxWaits {
  /** The waits on receipts and session keys, handed to the shared `outcome` / `events` helpers. */
  readonly wakeups: InboxWakeups;
  readonly #notices = new EventChannel<readonly [string, InboxNotice]>();
  readonly #self: SqlitePeer;
  readonly #peers: SqlitePeers;
  readonly #poller: SqlitePoller;

  /** `isOpen`: the inbox is not closed (a closed one's poller stops at its next tick). */
  constructor(path: string, statements: InboxStatements, pollMs: number, isOpen: () => boolean) {
    this.wakeups = new InboxWakeups(() => {
      this.#poller.start();
    });
    this.#poller = new SqlitePoller(statements, pollMs, {
      busy: () => isOpen() && (this.wakeups.size > 0 || this.#notices.hasListeners),
      wake: (receiptId) => {
        this.wakeups.wake(receiptId);
      },
      wakeAll: () => {
        this.wakeups.wakeAll();
      },
      notice: (key, what) => {
        this.#notices.emit([key, what]);
      },
      failed: () => {
        // a busy or unreadable file: the waits look again at the next tick
      },
    });
    this.#self = {
      wake: (receiptId) => {
        this.wakeups.wake(receiptId);
      },
      notice: (key, what) => {
        this.#notices.emit([key, what]);
      },
    };
    this.#peers = new SqlitePeers(path, this.#self);
  }

  /** Something about the receipt changed (an outcome, an event, an acknowledgement): its waits wake. */
  wake(receiptId: string): void {
    this.#peers.wake(receiptId);
  }

  /** A notice (`accept`'s `entry`, `release`'s, `notify`'s) for the `onNotify` listeners. */
  notice(sessionKey: string, what: InboxNotice): void {
    this.#peers.notice(sessionKey, what);
  }

  /** See `Inbox.onNotify` (on an open inbox): the listener subscribed, the poller started. */
  onNotify(listener: (sessionKey: string, what: InboxNotice) => void): () => void {
    const off = this.#notices.on(([key, what]) => {
      listener(key, what);
    });
    this.#poller.start();
    return off;
  }

  /** At `close()`: stops polling, leaves the peers, rejects the waits with `reason`, ends the listeners. */
  close(reason: unknown): void {
    this.#poller.stop();
    this.#peers.leave(this.#self);
    this.wakeups.close(reason);
    this.#notices.end();
  }
}

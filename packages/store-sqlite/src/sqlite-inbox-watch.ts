import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { InboxNotice } from '@signalyard/core';
import { startTimer } from '@signalyard/core/internal';
import type { InboxStatements } from './sqlite-inbox-statements.js';

/**
 * Written into the rows this process adds that others poll for (entries, notices): a process's
 * own pollers skip them, because {@link SqlitePeers} delivered them in-process already.
 */
export const PROCESS_ORIGIN = randomUUID();

/** What one inbox of this process hears from the others over the same file. @internal */
export interface SqlitePeer {
  /** Something about the receipt changed (an outcome, an event, an acknowledgement). */
  wake(receiptId: string): void;
  /** A notice (`accept`'s `entry`, `notify`'s). */
  notice(sessionKey: string, what: InboxNotice): void;
}

const peersByFile = new Map<string, Set<SqlitePeer>>();

/**
 * The inboxes of this process over one file: what one of them writes, the others (and itself)
 * hear at once, without waiting for a poll. A private `:memory:` database has no peers.
 * @internal
 */
export class SqlitePeers {
  readonly #set: Set<SqlitePeer>;
  readonly #file: string | undefined;

  constructor(path: string, self: SqlitePeer) {
    if (path === ':memory:') {
      this.#set = new Set([self]);
      this.#file = undefined;
      return;
    }
    const file = resolve(path);
    let set = peersByFile.get(file);
    if (set === undefined) {
      set = new Set();
      peersByFile.set(file, set);
    }
    set.add(self);
    this.#set = set;
    this.#file = file;
  }

  wake(receiptId: string): void {
    for (const peer of [...this.#set]) peer.wake(receiptId);
  }

  notice(sessionKey: string, what: InboxNotice): void {
    for (const peer of [...this.#set]) peer.notice(sessionKey, what);
  }

  /** Leaves the set (at `close()`). */
  leave(self: SqlitePeer): void {
    this.#set.delete(self);
    if (this.#file !== undefined && this.#set.size === 0) peersByFile.delete(this.#file);
  }
}

/** What a {@link SqlitePoller} tells its inbox. @internal */
export interface PollTarget {
  /** Whether anything waits (watches, listeners): when not, the poller stops. */
  busy(): boolean;
  wake(receiptId: string): void;
  /** Wakes every watch: they look again (an acknowledgement leaves no row to find). */
  wakeAll(): void;
  notice(sessionKey: string, what: InboxNotice): void;
  /** A poll failed (the file is locked, the disk gone): the poller goes on at its next tick. */
  failed(error: unknown): void;
}

/** The highest id seen in each polled table. */
interface Marks {
  notice: number;
  entry: number;
  outcome: number;
  event: number;
}

/** How many ticks pass between two `wakeAll`s. */
const WAKE_ALL_EVERY = 10;

/**
 * Polls the file every `pollMs`, while its inbox has anything waiting, for what other processes
 * wrote since the last look: notices and new entries (as notices), outcomes and stream events
 * (as wakes of their receipt). Every {@link WAKE_ALL_EVERY} ticks it wakes every watch. Its timer
 * never keeps the process alive.
 * @internal
 */
export class SqlitePoller {
  readonly #s: InboxStatements;
  readonly #pollMs: number;
  readonly #target: PollTarget;
  #cancel: (() => void) | undefined;
  #marks: Marks = { notice: 0, entry: 0, outcome: 0, event: 0 };
  #ticks = 0;

  constructor(statements: InboxStatements, pollMs: number, target: PollTarget) {
    this.#s = statements;
    this.#pollMs = pollMs;
    this.#target = target;
  }

  /** Starts polling, from what the file holds now, unless it already polls. */
  start(): void {
    if (this.#cancel !== undefined) return;
    try {
      const marks = this.#s.marks.get() as Marks;
      this.#marks = { notice: marks.notice, entry: marks.entry, outcome: marks.outcome, event: marks.event };
    } catch (error) {
      this.#target.failed(error);
    }
    this.#schedule();
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }

  #schedule(): void {
    this.#cancel = startTimer(
      this.#pollMs,
      () => {
        this.#cancel = undefined;
        if (!this.#target.busy()) return;
        this.#tick();
        this.#schedule();
      },
      { unref: true },
    );
  }

  #tick(): void {
    const s = this.#s;
    const target = this.#target;
    try {
      for (const row of s.newNotices.all(this.#marks.notice) as {
        id: number;
        session_key: string;
        what: string;
        origin: string;
      }[]) {
        this.#marks.notice = row.id;
        if (row.origin !== PROCESS_ORIGIN) target.notice(row.session_key, row.what as InboxNotice);
      }
      for (const row of s.newEntries.all(this.#marks.entry) as { id: number; session_key: string; origin: string }[]) {
        this.#marks.entry = row.id;
        if (row.origin !== PROCESS_ORIGIN) target.notice(row.session_key, 'entry');
      }
      for (const row of s.newOutcomes.all(this.#marks.outcome) as { id: number; receipt_id: string }[]) {
        this.#marks.outcome = row.id;
        target.wake(row.receipt_id);
      }
      for (const row of s.newEvents.all(this.#marks.event) as { id: number; receipt_id: string }[]) {
        this.#marks.event = Math.max(this.#marks.event, row.id);
        target.wake(row.receipt_id);
      }
    } catch (error) {
      target.failed(error);
    }
    if (++this.#ticks % WAKE_ALL_EVERY === 0) target.wakeAll();
  }
}

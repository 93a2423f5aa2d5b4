import { onAbort } from '@signalyard/core/internal';
import { lostError } from './postgres-lock-errors.js';
import type { PostgresLockError } from './errors/postgres-lock-error.js';

// The in-process side of PostgresSessionLock: one withLock call while it waits (Wait) and while it
// runs `fn` (Hold), the keys held in an async context (Holding), and the line of calls for one key
// in this process (KeyLines).

/** One `withLock` call while it waits: stopped by its abortSignal, its deadline or `close()`. @internal */
export class Wait {
  readonly controller = new AbortController();
  reason: Error | undefined;
  /** True when the stop was the deadline: a try already under way may still take the lock. */
  timedOut = false;

  stop(reason: Error, timedOut = false): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.timedOut = timedOut;
    this.controller.abort(reason);
  }

  /** True once stopped (a method, not a field read: it changes across awaits). */
  stopped(): boolean {
    return this.reason !== undefined;
  }

  /** True once stopped by an abort or `close()`: then not even a lock already granted is kept. */
  cancelled(): boolean {
    return this.reason !== undefined && !this.timedOut;
  }

  /** Throws the reason this wait was stopped for, if it was. */
  throwIfStopped(): void {
    if (this.reason !== undefined) throw this.reason;
  }
}

/** One `withLock` call while it runs `fn`: its `lockSignal`, fired when the connection is lost. @internal */
export class Hold {
  readonly controller = new AbortController();
  /** Set when the lock was lost while `fn` ran. */
  lost: PostgresLockError | undefined;

  constructor(readonly key: string) {}

  lose(cause: unknown): void {
    if (this.lost !== undefined) return;
    this.lost = lostError(this.key, cause);
    this.controller.abort(this.lost);
  }
}

/** A key this lock holds in the current async context (a chain: the innermost `withLock` first). @internal */
export interface Holding {
  readonly key: string;
  /** False once that `withLock` has ended: work it started and left running may lock the key again. */
  active: boolean;
  readonly outer: Holding | undefined;
}

/**
 * The calls for each key in this process, in line (FIFO): advisory locks are re-entrant per
 * connection, so only the head of a key's line asks the server. @internal
 */
export class KeyLines {
  /** Keys taken (or being taken) in this process → the calls waiting behind, in order. */
  readonly #lines = new Map<string, (() => void)[]>();

  /** Waits for this process's earlier calls for `key`; resolves when this call is at the head of the line. */
  async enter(key: string, wait: Wait): Promise<void> {
    const line = this.#lines.get(key);
    if (line === undefined) {
      this.#lines.set(key, []);
      return;
    }
    wait.throwIfStopped();
    await new Promise<void>((resolve, reject) => {
      const stopListening = onAbort(wait.controller.signal, () => {
        const at = line.indexOf(proceed);
        if (at !== -1) line.splice(at, 1);
        reject(wait.reason ?? new Error('stopped'));
      });
      function proceed(): void {
        stopListening();
        resolve();
      }
      line.push(proceed);
    });
  }

  /** Hands `key` to the next call in this process's line, or frees it. */
  leave(key: string): void {
    const line = this.#lines.get(key);
    const next = line?.shift();
    if (next === undefined) this.#lines.delete(key);
    else next();
  }
}

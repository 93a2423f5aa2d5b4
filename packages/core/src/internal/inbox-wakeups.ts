/** One wait registered with {@link InboxWakeups.watch}. */
export interface InboxWatch {
  /** Resolves at the next `wake` of the watched key or `wakeAll`; rejects when the wakeups close. */
  readonly promise: Promise<void>;
  /** Stops watching (idempotent); call it in a `finally`. */
  dispose(): void;
}

interface Watcher {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Who waits for what in one inbox: `outcome()` waits on their receipt, `events()` reads on
 * theirs. A transport wakes a key when something about it may have changed (a NOTIFY, a poll
 * finding a new row, a call in this process), and everything on a reconnect; the waiter then
 * looks again. Register the watch before looking, so a change between the look and the wait is
 * never missed.
 */
export class InboxWakeups {
  readonly #watchers = new Map<string, Set<Watcher>>();
  #closed: unknown;
  #isClosed = false;
  readonly #onWatch: (() => void) | undefined;

  /** `onWatch` runs on each new watch: a transport starts its poller or listener there. */
  constructor(onWatch?: () => void) {
    this.#onWatch = onWatch;
  }

  /** Starts watching `key`. */
  watch(key: string): InboxWatch {
    let watcher: Watcher | undefined;
    const promise = new Promise<void>((resolve, reject) => {
      watcher = { resolve, reject };
    });
    const w = watcher as Watcher;
    promise.catch(ignore); // a waiter that stops before awaiting it (its look failed) leaves no unhandled rejection
    if (this.#isClosed) {
      w.reject(this.#closed);
      return { promise, dispose: ignore };
    }
    let set = this.#watchers.get(key);
    if (set === undefined) {
      set = new Set();
      this.#watchers.set(key, set);
    }
    set.add(w);
    this.#onWatch?.();
    return {
      promise,
      dispose: () => {
        const current = this.#watchers.get(key);
        if (current?.delete(w) === true && current.size === 0) this.#watchers.delete(key);
        w.resolve(); // settles it (a no-op when already settled), so nothing dangles
      },
    };
  }

  /** Wakes every watch of `key`. */
  wake(key: string): void {
    const set = this.#watchers.get(key);
    if (set === undefined) return;
    this.#watchers.delete(key);
    for (const w of set) w.resolve();
  }

  /** Wakes every watch. */
  wakeAll(): void {
    const all = [...this.#watchers.values()];
    this.#watchers.clear();
    for (const set of all) for (const w of set) w.resolve();
  }

  /** The keys watched now. */
  keys(): string[] {
    return [...this.#watchers.keys()];
  }

  /** How many keys are watched now. */
  get size(): number {
    return this.#watchers.size;
  }

  /** Rejects every watch, now and later, with `error`. */
  close(error: unknown): void {
    this.#isClosed = true;
    this.#closed = error;
    const all = [...this.#watchers.values()];
    this.#watchers.clear();
    for (const set of all) {
      for (const w of set) w.reject(error);
    }
  }
}

function ignore(): void {
  // the waiter reads the rejection, or has stopped waiting
}

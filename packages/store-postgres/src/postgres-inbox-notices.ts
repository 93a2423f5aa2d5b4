import { compareInboxSeq } from '@signalyard/core/internal';

/** How many session keys {@link NoticeFilter} remembers a read position for (the oldest are forgotten first). */
const REMEMBERED_KEYS = 10_000;

/**
 * Drops the `entry` notices of a {@link PostgresInbox} that announce entries a `read` of this
 * inbox instance has returned already, and holds back those arriving while a `read` of their key
 * is in flight until it answers (it may return them). An accept's notice carries its entry's
 * `seq` (`E<seq>:<key>`): it arrives after the accept committed, usually while the lease holder's
 * read — woken by an earlier notice — has read that entry already; passed on, every such notice
 * made the holder read once more and find nothing. A notice without a `seq` (`release`, `notify`,
 * a reconnect's look) always passes. A dropped notice announced nothing this process's readers
 * lack: the entry was returned to one of them (another process's workers cannot lease a key this
 * process reads under a live lease; a released key is forgotten, and its release sends a notice
 * of its own). Holds only positions and `seq`s, never entries.
 * @internal
 */
export class NoticeFilter {
  /** Per session key: the highest `seq` a read returned (under any lease, until released). */
  readonly #readThrough = new Map<string, string>();
  /** Per session key: the reads in flight. */
  readonly #reading = new Map<string, number>();
  /** Per session key whose read is in flight: the highest `seq` of the notices held back. */
  readonly #held = new Map<string, string>();
  readonly #pass: (sessionKey: string) => void;

  /** `pass` receives each notice let through (an `entry` notice of that key). */
  constructor(pass: (sessionKey: string) => void) {
    this.#pass = pass;
  }

  /** An accept's notice for `seq` of `sessionKey`: passed on, held back until a read answers, or dropped. */
  entry(sessionKey: string, seq: string): void {
    if (this.#covered(sessionKey, seq)) return;
    if (this.#reading.has(sessionKey)) {
      const held = this.#held.get(sessionKey);
      if (held === undefined || compareInboxSeq(seq, held) > 0) this.#held.set(sessionKey, seq);
      return;
    }
    this.#pass(sessionKey);
  }

  /** A read of `sessionKey` is sent; call the returned function with the highest `seq` it returned (`undefined`: none, or it failed). */
  reading(sessionKey: string): (through: string | undefined) => void {
    this.#reading.set(sessionKey, (this.#reading.get(sessionKey) ?? 0) + 1);
    let done = false;
    return (through) => {
      if (done) return;
      done = true;
      if (through !== undefined && !this.#covered(sessionKey, through)) this.#remember(sessionKey, through);
      const left = (this.#reading.get(sessionKey) ?? 1) - 1;
      if (left > 0) {
        this.#reading.set(sessionKey, left);
        return;
      }
      this.#reading.delete(sessionKey);
      const held = this.#held.get(sessionKey);
      this.#held.delete(sessionKey);
      if (held !== undefined && !this.#covered(sessionKey, held)) this.#pass(sessionKey);
    };
  }

  /** Runs `read` (a read of `sessionKey`'s entries, `undefined` when the lease is lost), holding its notices back meanwhile. */
  async around<T extends readonly { readonly seq: string }[] | undefined>(
    sessionKey: string,
    read: () => Promise<T>,
  ): Promise<T> {
    const answered = this.reading(sessionKey);
    let entries: T | undefined;
    try {
      entries = await read();
      return entries;
    } finally {
      answered(entries?.at(-1)?.seq);
    }
  }

  /** The key's lease was given up here: its entries may be read afresh by anyone, announced or not. */
  forget(sessionKey: string): void {
    this.#readThrough.delete(sessionKey);
  }

  #covered(sessionKey: string, seq: string): boolean {
    const through = this.#readThrough.get(sessionKey);
    return through !== undefined && compareInboxSeq(seq, through) <= 0;
  }

  #remember(sessionKey: string, seq: string): void {
    this.#readThrough.delete(sessionKey); // re-inserted last: the most recently read key is forgotten last
    this.#readThrough.set(sessionKey, seq);
    if (this.#readThrough.size > REMEMBERED_KEYS) {
      const oldest = this.#readThrough.keys().next();
      if (oldest.done !== true) this.#readThrough.delete(oldest.value);
    }
  }
}

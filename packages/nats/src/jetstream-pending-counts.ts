import type { Ready } from './jetstream-inbox-parts.js';

/** How long a session's count from the server is trusted (plus this process's own accepts since), in ms. */
const FRESH_MS = 1000;

/**
 * `maxPendingPerSession` without a server request per `accept`: the entries waiting on a key's
 * subject, as the stream last said (`subjects_filter` stream info) plus what this process
 * accepted on it since, asked again once that is a second old or reaches the limit — so the
 * refusal itself is always judged on a fresh count. Other processes' accepts of the last second
 * are not seen: with many producers on one session the bound is soft by that much. (The whole
 * inbox's bound, `maxPending`, is the stream's own `max_msgs` with discard-new: exact.)
 * @internal
 */
export class PendingCounts {
  readonly #limit: number;
  readonly #counts = new Map<string, { count: number; at: number }>();
  /** The stream-info request in flight per subject: concurrent accepts on a key share one. */
  readonly #asking = new Map<string, Promise<number>>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /**
   * Whether the key on `subject` has `maxPendingPerSession` entries waiting: `false` at once
   * (no promise, no microtask) while a fresh count is below the limit, else the server's answer.
   */
  full(r: Ready, subject: string): false | Promise<boolean> {
    const known = this.#counts.get(subject);
    if (known !== undefined && performance.now() - known.at < FRESH_MS && known.count < this.#limit) return false;
    return this.#ask(r, subject).then((count) => count >= this.#limit);
  }

  /** The server's count on `subject` now, one request at a time per subject. */
  #ask(r: Ready, subject: string): Promise<number> {
    let asking = this.#asking.get(subject);
    if (asking === undefined) {
      const at = performance.now();
      asking = r.c.jsm.streams
        .info(r.names.stream, { subjects_filter: subject })
        .then((info) => {
          const count = info.state.subjects?.[subject] ?? 0;
          if (this.#counts.size > 10_000) this.#counts.clear();
          this.#counts.set(subject, { count, at });
          return count;
        })
        .finally(() => this.#asking.delete(subject));
      this.#asking.set(subject, asking);
    }
    return asking;
  }

  /** One more entry accepted on `subject` by this process. */
  accepted(subject: string): void {
    const known = this.#counts.get(subject);
    if (known !== undefined) known.count++;
  }
}

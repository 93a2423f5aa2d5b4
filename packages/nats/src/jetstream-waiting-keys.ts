import { keyOfMessage } from './jetstream-entries.js';
import type { Ready } from './jetstream-inbox-parts.js';

/** How long a key's first waiting entry, as read, orders the keys without being read again (ms). */
const FIRST_FRESH_MS = 1000;
/** The most keys remembered (the memory is dropped past it and rebuilt). */
const MAX_KNOWN = 100_000;

/** A session key with entries waiting: its partition, subject hash and first waiting `seq` (or a lower bound of it). @internal */
export interface WaitingKey {
  readonly n: number;
  readonly key: string;
  readonly hash: string;
  readonly first: number;
}

/**
 * Which session keys have entries waiting, for `acquire`, without a request per partition and
 * per key on every look: one stream info over the whole stream (the entries waiting per key
 * subject), plus a direct get for the first entry of each key subject not read within the last
 * second (its session key and `seq`, for the oldest-first order). An entry this instance
 * acknowledged moves its key's first `seq` past it at once (and counts as a read: a key drained
 * here sorts as if its next entry came then); acknowledgements by other processes are seen
 * within the second (until then the key sorts a little early: the order is a fairness hint,
 * never a guarantee's).
 * @internal
 */
export class WaitingKeys {
  readonly #known = new Map<string, { key: string; first: number; at: number }>();

  /** The keys with entries waiting, oldest first entry first. */
  async list(r: Ready): Promise<WaitingKey[]> {
    const { stream } = r.names;
    const info = await r.c.jsm.streams.info(stream, { subjects_filter: `${stream}.>` });
    const subjects = Object.entries(info.state.subjects ?? {})
      .filter(([, count]) => count > 0)
      .map(([subject]) => subject);
    const now = performance.now();
    const stale = subjects.filter((subject) => {
      const known = this.#known.get(subject);
      return known === undefined || now - known.at >= FIRST_FRESH_MS;
    });
    const firsts = await Promise.all(
      stale.map((subject) => r.c.jsm.direct.getMessage(stream, { next_by_subj: subject, seq: 1 })),
    );
    if (this.#known.size > MAX_KNOWN) this.#known.clear();
    stale.forEach((subject, i) => {
      const message = firsts[i];
      if (message === null || message === undefined) this.#known.delete(subject);
      else this.#known.set(subject, { key: keyOfMessage(message), first: message.seq, at: now });
    });
    const out: WaitingKey[] = [];
    for (const subject of subjects) {
      const known = this.#known.get(subject);
      if (known === undefined) continue;
      const [partition, hash] = subject.slice(stream.length + 2).split('.');
      out.push({ n: Number(partition), key: known.key, hash: hash as string, first: known.first });
    }
    return out.sort((a, b) => a.first - b.first);
  }

  /** This instance acknowledged the entry at `seq` on `subject`: the key's first waiting entry is later (a bound as fresh as a read). */
  acked(subject: string, seq: number): void {
    const known = this.#known.get(subject);
    if (known === undefined || known.first > seq) return;
    known.first = seq + 1;
    known.at = performance.now();
  }
}

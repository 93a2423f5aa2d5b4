import type { InboxEntry } from '@signalyard/core';
import { entryOfMessage, keyOfMessage, messagesOn } from './jetstream-entries.js';
import { attemptsRead, place, type AttemptsRead, type Ready } from './jetstream-inbox-parts.js';

/** How many entries a `read` takes at a time. */
const READ_PAGE = 100;

/** The most leases whose deliveries are remembered (the oldest are forgotten past it: their release reads the key's entries). */
const MAX_LEASES = 10_000;
/** The most entries read whose dedupe receipt is remembered for `putOutcome` (the oldest are forgotten past it: their `ack` keeps it). */
const MAX_RECEIPTS = 10_000;

/** What keeps an entry's receipt by its `Nats-Msg-Id` (for a retried `accept` once it is settled), and whether it was kept already. @internal */
export interface ReceiptToKeep {
  readonly msgId: string;
  readonly text: string;
  kept: boolean;
}

/**
 * What this process knows of deliveries, so that the hot path does not ask the server again:
 * the delivery count of each entry as last read or written here (its revision: `beginDelivery`
 * is then one compare-and-set), and, per lease token read under here, the entries whose delivery
 * began under it and that were not acknowledged (what `release` takes back, without reading every
 * entry of the key), and the `Nats-Msg-Id` of each entry read (for `ack`, which keeps the
 * receipt by it).
 * @internal
 */
export class Deliveries {
  readonly #begun = new Map<string, Set<number>>();
  readonly #counts = new WeakMap<InboxEntry, AttemptsRead>();
  readonly #msgIds = new WeakMap<InboxEntry, string>();
  /** By receipt id, the entries read here whose `Nats-Msg-Id` is set (not yet acknowledged). */
  readonly #receipts = new Map<string, ReceiptToKeep>();

  /** The next page of `sessionKey`'s entries after `after` (direct gets on its subject, in stream order), with their delivery counts. */
  async page(r: Ready, sessionKey: string, after: string): Promise<InboxEntry[]> {
    const { subject } = place(r, sessionKey);
    let from = Number(after) + 1;
    for (;;) {
      const messages = await messagesOn(r.c.jsm, r.names.stream, subject, from, READ_PAGE);
      if (messages.length === 0) return [];
      const mine = messages.filter((m) => keyOfMessage(m) === sessionKey);
      if (mine.length > 0) {
        const counts = await Promise.all(mine.map((m) => attemptsRead(r.buckets.attempts, m.seq)));
        return mine.map((m, i) => {
          const count = counts[i] as AttemptsRead;
          const entry = entryOfMessage(m, count.n);
          this.#counts.set(entry, count);
          const msgId = m.header.get('Nats-Msg-Id');
          this.#msgIds.set(entry, msgId);
          if (msgId !== '') this.#keepReceipt(entry, msgId);
          return entry;
        });
      }
      from = (messages.at(-1)?.seq ?? from) + 1; // only another key with the same hash: read on
    }
  }

  #keepReceipt(entry: InboxEntry, msgId: string): void {
    if (this.#receipts.size >= MAX_RECEIPTS) {
      const oldest = this.#receipts.keys().next();
      if (oldest.done !== true) this.#receipts.delete(oldest.value);
    }
    const { receiptId, sessionKey, seq, acceptedAt } = entry;
    this.#receipts.set(receiptId, {
      msgId,
      text: JSON.stringify({ receiptId, sessionKey, seq, acceptedAt }),
      kept: false,
    });
  }

  /** The dedupe receipt of an entry read here and not acknowledged, by its receipt id. */
  receipt(receiptId: string): ReceiptToKeep | undefined {
    return this.#receipts.get(receiptId);
  }

  /** The `Nats-Msg-Id` of an entry read here. */
  msgId(entry: InboxEntry): string | undefined {
    return this.#msgIds.get(entry);
  }

  /** Entries are read under the lease `token` in this process. */
  reading(token: string): void {
    if (this.#begun.has(token)) return;
    if (this.#begun.size >= MAX_LEASES) {
      const oldest = this.#begun.keys().next();
      if (oldest.done !== true) this.#begun.delete(oldest.value);
    }
    this.#begun.set(token, new Set());
  }

  /** The delivery count of `entry` as last read or written here. */
  last(entry: InboxEntry): AttemptsRead | undefined {
    return this.#counts.get(entry);
  }

  /** A delivery of `entry` began under the lease token `under` (read here), counted as `count`. */
  begun(entry: InboxEntry, under: string | undefined, count: AttemptsRead): void {
    this.#counts.set(entry, count);
    if (under !== undefined) this.#begun.get(under)?.add(Number(entry.seq));
  }

  /** `entry`, read under the lease token `under`, was acknowledged. */
  acked(entry: InboxEntry, under: string | undefined): void {
    this.#receipts.delete(entry.receiptId);
    if (under !== undefined) this.#begun.get(under)?.delete(Number(entry.seq));
  }

  /** The entries begun under `token` and not acknowledged, forgotten now; `undefined` when this process did not read under it. */
  takeBegun(token: string): number[] | undefined {
    const begun = this.#begun.get(token);
    this.#begun.delete(token);
    return begun === undefined ? undefined : [...begun];
  }
}

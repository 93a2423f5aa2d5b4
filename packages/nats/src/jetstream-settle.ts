import type { InboxEntry, OutcomeJson } from '@signalyard/core';
import type { CheckedSettle } from '@signalyard/core/internal';
import { headers } from '@nats-io/nats-core';
import type { Holders } from './jetstream-acquire.js';
import type { Deliveries } from './jetstream-deliveries.js';
import { storedEntry } from './jetstream-entries.js';
import { isApiCode } from './jetstream-errors.js';
import type { InboxSignals } from './jetstream-inbox-signals.js';
import { createOutcome, eventSubject, keepDeadLetter, place, type Ready } from './jetstream-inbox-parts.js';
import { parseReceiptId, receiptKey } from './jetstream-names.js';

/** What storing outcomes and acknowledging entries needs of an inbox instance. @internal */
export interface SettleParts {
  readonly r: Ready;
  readonly h: Holders;
  readonly stream: string;
  readonly signals: InboxSignals;
  /** The entries read in this process (their receipts, `Nats-Msg-Id`s and deliveries). */
  readonly deliveries: Deliveries;
  /** Under which lease each entry was read in this process. */
  readonly readUnder: WeakMap<InboxEntry, string>;
}

/**
 * The writes of an outcome (`text`, checked), sent at once: the outcomes bucket, compare-and-set
 * so that the first outcome stays, and, when this process read the entry, its dedupe receipt
 * (what `ack` keeps for a retried accept), in the same write to the server.
 */
function outcomeWrites(p: SettleParts, receiptId: string, text: string, ttlMs: number): Promise<unknown>[] {
  const receipt = p.deliveries.receipt(receiptId);
  const keep =
    receipt === undefined || receipt.kept
      ? undefined
      : p.r.buckets.receipts.put(`d${receipt.msgId}`, receipt.text).then(() => {
          receipt.kept = true;
        });
  return [createOutcome(p.r, receiptKey(receiptId), `{"ms":${ttlMs},"o":${text}}`), keep ?? Promise.resolve()];
}

/**
 * `Inbox.putOutcome` on JetStream once checked: the outcome's writes (and `also`, sent beside
 * them) awaited together, a poisoned entry's dead letter, and the waiters woken.
 * @internal
 */
export async function storeOutcome(
  p: SettleParts,
  receiptId: string,
  text: string,
  poisoned: boolean,
  ttlMs: number,
  also: readonly Promise<unknown>[] = [],
): Promise<void> {
  await Promise.all([...outcomeWrites(p, receiptId, text, ttlMs), ...also]);
  if (poisoned) await keepDeadLetter(p.r, receiptId, JSON.parse(text) as OutcomeJson, ttlMs);
  p.signals.settled(p.r, receiptId);
}

/**
 * `Inbox.ack` on JetStream: through the partition's consumer when this process's holder pulled
 * the entry, else by deleting it from the stream; the dedupe receipt kept first (unless
 * `putOutcome` kept it), the delivery count dropped in the same write (not awaited).
 * @internal
 */
export async function acknowledge(p: SettleParts, entry: InboxEntry): Promise<void> {
  const { r } = p;
  const parsed = parseReceiptId(entry.receiptId);
  if (parsed === undefined) return;
  let msgId = p.deliveries.msgId(entry);
  if (msgId === undefined) {
    const message = await storedEntry(r.c.jsm, p.stream, entry.receiptId);
    if (message === undefined) return;
    msgId = message.header.get('Nats-Msg-Id');
  }
  if (msgId !== '' && p.deliveries.receipt(entry.receiptId)?.kept !== true) {
    const { receiptId, sessionKey, seq, acceptedAt } = entry;
    await r.buckets.receipts.put(`d${msgId}`, JSON.stringify({ receiptId, sessionKey, seq, acceptedAt }));
  }
  // The delivery count of a settled entry is of no use (an ack that fails leaves an entry that
  // guarantee 2 skips): dropped in the same write as the ack, without waiting for it.
  void r.buckets.attempts.purge(`a${parsed.seq}`).catch(() => undefined);
  const { partition, subject } = place(r, entry.sessionKey);
  const holder = p.h.holders.get(partition);
  const acked = holder === undefined ? false : await holder.ack(parsed.seq).catch(() => false);
  if (!acked) {
    await r.c.jsm.streams.deleteMessage(p.stream, parsed.seq, false).catch((error: unknown) => {
      // gone already: "no message found" (10037, or 10057 "delete failed" saying so on 2.9)
      if (!isApiCode(error, 10037, 10043) && !(isApiCode(error, 10057) && /no message found/i.test(String(error))))
        throw error;
    });
  }
  p.deliveries.acked(entry, p.readUnder.get(entry));
  p.h.waiting.acked(subject, parsed.seq);
  p.signals.settled(r, entry.receiptId);
}

/**
 * `Inbox.settle` on JetStream: the delivery's last events, the outcome and the entry's receipt
 * go out together and are awaited once (one round trip), then the ack (the outcome is stored
 * before the entry is acknowledged: an outcome lost after the ack could not be asked again).
 * The events are appended only while the entry is in the stream: known without a request when
 * this process's holder pulled it and has not acknowledged it, else asked of the stream's leader
 * first. An entry already gone gets its outcome stored and nothing else.
 * @internal
 */
export async function settleEntry(p: SettleParts, entry: InboxEntry, c: CheckedSettle, ttlMs: number): Promise<void> {
  const { r } = p;
  const parsed = parseReceiptId(entry.receiptId);
  let there = false;
  if (parsed !== undefined && c.eventTexts.length > 0) {
    there =
      p.h.holders.get(place(r, entry.sessionKey).partition)?.has(parsed.seq) === true ||
      (await storedEntry(r.c.jsm, p.stream, entry.receiptId)) !== undefined;
  }
  const published: Promise<unknown>[] = [];
  if (there && parsed !== undefined) {
    const h = headers();
    h.set('Sy-Receipt', entry.receiptId);
    const subject = eventSubject(r, parsed.seq);
    // One connection keeps publish order: the stream stores them in this order.
    for (const text of c.eventTexts) published.push(r.c.js.publish(subject, `${c.attempt}\n${text}`, { headers: h }));
  }
  await storeOutcome(p, entry.receiptId, c.outcomeText, c.poisoned, ttlMs, published); // wakes the readers too
  await acknowledge(p, entry);
}

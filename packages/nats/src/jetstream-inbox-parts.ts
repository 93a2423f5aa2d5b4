import {
  InboxError,
  type InboxDeadLetter,
  type InboxEntry,
  type InboxLeaseInfo,
  type InboxReceipt,
  type OutcomeJson,
} from '@signalyard/core';
import type { EventLogSource, EventRow, OutcomeLookup } from '@signalyard/core/internal';
import type { KV, KvEntry } from '@nats-io/kv';
import type { InboxConnection } from './jetstream-connection.js';
import { entryOfMessage, keyOfMessage, messagesOn, receiptOfMessage, storedEntry } from './jetstream-entries.js';
import { isApiCode } from './jetstream-errors.js';
import type { KvLeases } from './jetstream-leases.js';
import { parseReceiptId, placeKey, receiptKey, type JetStreamNames, type KeyPlace } from './jetstream-names.js';
import type { InboxBuckets } from './jetstream-provision.js';

/** A connected, provisioned inbox's handles. @internal */
export interface Ready {
  readonly c: InboxConnection;
  readonly buckets: InboxBuckets;
  readonly leases: KvLeases;
  readonly names: JetStreamNames;
  readonly partitions: number;
}

/** A delivery count as kept in the attempts bucket (key `a<seq>`): the count, the lease token of the latest delivery, the count before that lease's first. */
interface AttemptsValue {
  readonly n: number;
  readonly t: string;
  readonly b: number;
}

/** Whether a compare-and-set lost its race. */
function lostRace(error: unknown): boolean {
  return isApiCode(error, 10071) || (error instanceof Error && /wrong last sequence/i.test(error.message));
}

/** A KV value kept with its own time to live (`ms` after the entry's server timestamp), live now? */
function liveFor(entry: KvEntry | null, now: number): { ms: number } | undefined {
  if (entry?.operation !== 'PUT' || entry.length === 0) return undefined;
  const value = entry.json<{ ms: number }>();
  return entry.created.getTime() + value.ms > now ? value : undefined;
}

/** Stores an outcome under `key` unless a live one is there: the first outcome stays, an expired one is replaced. @internal */
export async function createOutcome(r: Ready, key: string, value: string): Promise<void> {
  await r.buckets.outcomes.create(key, value).catch(async (error: unknown) => {
    if (!lostRace(error)) throw error;
    const existing = await r.buckets.outcomes.get(key);
    if (existing === null || liveFor(existing, r.c.now()) !== undefined) return;
    await r.buckets.outcomes.update(key, value, existing.revision).catch((again: unknown) => {
      if (!lostRace(again)) throw again;
    });
  });
}

/** The place of `sessionKey` in this inbox. @internal */
export function place(r: Ready, sessionKey: string): KeyPlace {
  return placeKey(r.names.stream, r.partitions, sessionKey);
}

/** An entry's delivery count as read or written: the count, and the KV revision it was at (0: never written). @internal */
export interface AttemptsRead {
  readonly n: number;
  readonly revision: number;
  readonly value: AttemptsValue | undefined;
}

function attemptsOfEntry(entry: KvEntry | null): AttemptsRead {
  const live = entry !== null && entry.operation === 'PUT' && entry.length > 0;
  const value = live ? entry.json<AttemptsValue>() : undefined;
  return { n: value?.n ?? 0, revision: entry?.revision ?? 0, value };
}

/** The durable delivery count of the entry at `seq` (0 before the first), with its revision. @internal */
export async function attemptsRead(attempts: KV, seq: number): Promise<AttemptsRead> {
  return attemptsOfEntry(await attempts.get(`a${seq}`));
}

/** The durable delivery count of the entry at `seq` (0 before the first). @internal */
async function attemptsOf(attempts: KV, seq: number): Promise<number> {
  return (await attemptsRead(attempts, seq)).n;
}

/**
 * Counts one delivery of the entry at `seq` under the lease `token` (compare-and-set); resolves
 * the new count. `known` is the count as last read or written here: when nobody wrote since, one
 * write (else it reads and tries again).
 * @internal
 */
export async function countDelivery(
  attempts: KV,
  seq: number,
  token: string,
  known?: AttemptsRead,
): Promise<AttemptsRead> {
  let read = known;
  for (;;) {
    read ??= attemptsOfEntry(await attempts.get(`a${seq}`));
    const v = read.value ?? { n: 0, t: '', b: 0 };
    const next: AttemptsValue = { n: v.n + 1, t: token, b: v.t === token && token !== '' ? v.b : v.n };
    try {
      const revision =
        read.revision === 0
          ? await attempts.create(`a${seq}`, JSON.stringify(next))
          : await attempts.update(`a${seq}`, JSON.stringify(next), read.revision);
      return { n: next.n, revision, value: next };
    } catch (error) {
      if (!lostRace(error)) throw error;
      read = undefined;
    }
  }
}

/**
 * Takes back the deliveries begun under the lease `token` of `sessionKey`'s entries (a release
 * is not a delivery): those at `begun` (what this process began under it and did not
 * acknowledge), or, when this process does not know, every entry of the key.
 * @internal
 */
export async function rollbackDeliveries(
  r: Ready,
  sessionKey: string,
  token: string,
  begun: readonly number[] | undefined,
): Promise<void> {
  const { subject } = place(r, sessionKey);
  const seqs =
    begun ??
    (await messagesOn(r.c.jsm, r.names.stream, subject, 1, Number.MAX_SAFE_INTEGER)).map((message) => message.seq);
  for (const seq of seqs) {
    const entry = await r.buckets.attempts.get(`a${seq}`);
    if (entry?.operation !== 'PUT' || entry.length === 0) continue;
    const v = entry.json<AttemptsValue>();
    if (v.t !== token) continue;
    await r.buckets.attempts
      .update(`a${seq}`, JSON.stringify({ n: v.b, t: '', b: v.b }), entry.revision)
      .catch((error: unknown) => {
        if (!lostRace(error)) throw error;
      });
  }
}

/** The receipt of a settled entry by its `Nats-Msg-Id`, kept `dedupeWindowMs` after its `ack`. @internal */
async function settledReceipt(r: Ready, msgId: string): Promise<InboxReceipt | undefined> {
  const entry = await r.buckets.receipts.get(`d${msgId}`);
  if (entry?.operation !== 'PUT' || entry.length === 0) return undefined;
  return entry.json<InboxReceipt>();
}

/** The receipt of the first entry accepted with `msgId` (the stream answered a duplicate at `seq`). @internal */
export async function duplicateReceipt(
  r: Ready,
  seq: number,
  msgId: string,
  sessionKey: string,
): Promise<InboxReceipt> {
  const message = await r.c.jsm.direct.getMessage(r.names.stream, { seq });
  if (message !== null) return receiptOfMessage(message);
  const settled = await settledReceipt(r, msgId);
  if (settled !== undefined) return settled;
  throw new InboxError({
    code: 'INBOX_OUTCOME_UNKNOWN',
    message: `The id was accepted before (stream sequence ${seq}) and that entry was settled, but its receipt is no longer kept; nothing was appended for session ${JSON.stringify(sessionKey)}`,
    sessionKey,
  });
}

/** The receipt of an entry accepted with `msgId` that is still waiting under `sessionKey`, or was settled within the window. @internal */
export async function knownReceipt(r: Ready, sessionKey: string, msgId: string): Promise<InboxReceipt | undefined> {
  const { subject } = place(r, sessionKey);
  const messages = await messagesOn(r.c.jsm, r.names.stream, subject, 1, Number.MAX_SAFE_INTEGER);
  const found = messages.find((m) => m.header.get('Nats-Msg-Id') === msgId);
  return found === undefined ? settledReceipt(r, msgId) : receiptOfMessage(found);
}

/** What `outcome()` finds for a receipt now. @internal */
export async function lookupOutcome(r: Ready, receiptId: string): Promise<OutcomeLookup> {
  const entry = await r.buckets.outcomes.get(receiptKey(receiptId));
  const live = liveFor(entry, r.c.now());
  if (live !== undefined) return { outcome: (live as { ms: number; o: OutcomeJson }).o };
  return (await storedEntry(r.c.jsm, r.names.stream, receiptId)) === undefined ? 'gone' : 'pending';
}

/** The events stream's subject of the entry at `seq`. @internal */
export function eventSubject(r: Ready, seq: number): string {
  return `${r.names.events}.${seq}`;
}

/** Stream logs on the events stream, for `readEventLog`. @internal */
export function eventSource(r: Ready, maxPerSession: number): EventLogSource {
  const hasEvents = async (seq: number): Promise<boolean> =>
    (await r.c.jsm.direct.getMessage(r.names.events, { next_by_subj: eventSubject(r, seq), seq: 1 })) !== null;
  return {
    page: async (receiptId, after, limit) => {
      const parsed = parseReceiptId(receiptId);
      if (parsed === undefined) return { rows: [], live: false };
      const live = (await storedEntry(r.c.jsm, r.names.stream, receiptId)) !== undefined;
      const from = after === undefined ? 1 : Number(after) + 1;
      const messages = await messagesOn(r.c.jsm, r.names.events, eventSubject(r, parsed.seq), from, limit);
      const rows: EventRow[] = [];
      for (const message of messages) {
        if (message.header.get('Sy-Receipt') !== receiptId) continue;
        const text = message.string();
        const cut = text.indexOf('\n');
        rows.push({ offset: String(message.seq), attempt: Number(text.slice(0, cut)), text: text.slice(cut + 1) });
      }
      return { rows, live };
    },
    inFlight: async (sessionKey) => {
      const { subject } = place(r, sessionKey);
      const messages = await messagesOn(r.c.jsm, r.names.stream, subject, 1, maxPerSession);
      for (const message of messages.reverse()) {
        if (keyOfMessage(message) === sessionKey && (await hasEvents(message.seq))) {
          return receiptOfMessage(message).receiptId;
        }
      }
      return undefined;
    },
  };
}

/** The dead letters kept now, oldest first, at most `limit`. @internal */
export async function deadLetterList(r: Ready, limit: number): Promise<InboxDeadLetter[]> {
  const keys: string[] = [];
  for await (const key of await r.buckets.dead.keys()) keys.push(key);
  const now = r.c.now();
  const letters: { seq: number; letter: InboxDeadLetter }[] = [];
  for (const key of keys) {
    const entry = await r.buckets.dead.get(key);
    const live = liveFor(entry, now) as { ms: number; e: InboxEntry; o: OutcomeJson } | undefined;
    if (live !== undefined) letters.push({ seq: Number(live.e.seq), letter: { entry: live.e, outcome: live.o } });
  }
  return letters
    .sort((a, b) => a.seq - b.seq)
    .slice(0, limit)
    .map((l) => l.letter);
}

/** Keeps a poisoned entry as a dead letter for `ttlMs` (with its outcome). @internal */
export async function keepDeadLetter(r: Ready, receiptId: string, outcome: OutcomeJson, ttlMs: number): Promise<void> {
  const message = await storedEntry(r.c.jsm, r.names.stream, receiptId);
  if (message === undefined) return;
  const entry = entryOfMessage(message, await attemptsOf(r.buckets.attempts, message.seq));
  await r.buckets.dead.put(`x${message.seq}`, JSON.stringify({ ms: ttlMs, e: entry, o: outcome }));
}

/** `InspectableInbox.pending` on JetStream: the entries waiting, by session key then `seq`, at most `limit`. @internal */
export async function pendingEntries(r: Ready, sessionKey: string | undefined, limit: number): Promise<InboxEntry[]> {
  const subjects =
    sessionKey === undefined
      ? Object.keys(
          (await r.c.jsm.streams.info(r.names.stream, { subjects_filter: `${r.names.stream}.>` })).state.subjects ?? {},
        )
      : [place(r, sessionKey).subject];
  const entries: InboxEntry[] = [];
  for (const subject of subjects) {
    for (const message of await messagesOn(r.c.jsm, r.names.stream, subject, 1, Number.MAX_SAFE_INTEGER)) {
      if (sessionKey !== undefined && keyOfMessage(message) !== sessionKey) continue;
      entries.push(entryOfMessage(message, await attemptsOf(r.buckets.attempts, message.seq)));
    }
  }
  const bySeq = (a: InboxEntry, b: InboxEntry): number => Number(a.seq) - Number(b.seq);
  const byKey = (a: InboxEntry, b: InboxEntry): number =>
    a.sessionKey < b.sessionKey ? -1 : a.sessionKey > b.sessionKey ? 1 : 0;
  return entries.sort((a, b) => byKey(a, b) || bySeq(a, b)).slice(0, limit);
}

/** `InspectableInbox.leases` on JetStream: the live session-key leases, by session key. @internal */
export async function liveKeyLeases(r: Ready): Promise<InboxLeaseInfo[]> {
  const leases = await r.leases.live('k');
  return leases
    .filter((l) => l.value.s !== undefined)
    .map((l) => ({ key: l.value.s as string, workerId: l.value.w, expiresAt: new Date(l.expiresAt).toISOString() }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

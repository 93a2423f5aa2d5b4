import { randomUUID } from 'node:crypto';
import type {
  Inbox,
  InboxAcceptEntry,
  InboxLeaseInfo,
  InspectableInbox,
  InboxDeadLetter,
  InboxEntry,
  InboxLease,
  InboxNotice,
  InboxReceipt,
  InboxSettleEvents,
  InboxStreamEvent,
  InboxStreamRef,
  OutcomeJson,
  TurnEvent,
} from '@signalyard/core';
import {
  assertAcquire,
  assertAttempt,
  assertEntry,
  assertInboxId,
  assertInboxKey,
  assertLease,
  assertNotice,
  assertTtl,
  checkAccept,
  checkEventsArgs,
  checkSettle,
  checkLimit,
  checkPendingOptions,
  entrySettledError,
  inboxClosedError,
  inboxFullError,
  inboxInputError,
  inboxOutcome,
  isPoisonedOutcome,
  leaseLostError,
  outcomeText,
  readEventLog,
  readLeased,
  turnEventText,
  turnEventTexts,
} from '@signalyard/core/internal';
import type { PubAck } from '@nats-io/jetstream';
import { headers } from '@nats-io/nats-core';
import { InboxConnection } from './jetstream-connection.js';
import { InboxSignals } from './jetstream-inbox-signals.js';
import { PendingCounts } from './jetstream-pending-counts.js';
import { entryBody, storedEntry } from './jetstream-entries.js';
import { isApiCode, isTimeout, outcomeUnknown, unavailable } from './jetstream-errors.js';
import { acquireLeases, dropKeyLease, ensureHolder, newHolders } from './jetstream-acquire.js';
import { Deliveries } from './jetstream-deliveries.js';
import { acknowledge, settleEntry, storeOutcome, type SettleParts } from './jetstream-settle.js';
import {
  countDelivery,
  deadLetterList,
  duplicateReceipt,
  eventSource,
  eventSubject,
  knownReceipt,
  lookupOutcome,
  liveKeyLeases,
  pendingEntries,
  place,
  rollbackDeliveries,
  type Ready,
} from './jetstream-inbox-parts.js';
import {
  resolveJetStreamInboxOptions,
  type JetStreamInboxOptions,
  type ResolvedJetStreamInboxOptions,
} from './jetstream-inbox-options.js';
import { KvLeases, parseKeyLeaseToken, type KeyLeaseToken } from './jetstream-leases.js';
import { jetStreamNames, msgIdOf, type JetStreamNames } from './jetstream-names.js';
import { provisionInbox, type InboxBuckets } from './jetstream-provision.js';

const NAME = 'JetStreamInbox';
/** Under which lease each entry was read, for every JetStreamInbox of the process (an entry read by one instance may be passed to another). */
const readUnder = new WeakMap<InboxEntry, string>();
/** The entries read, their delivery counts and the deliveries begun under each lease, for every JetStreamInbox of the process. */
const deliveries = new Deliveries();

/**
 * The durable inbox on NATS JetStream (inbox.md, "JetStream specifics"), for fleets whose bus is
 * NATS: once `accept` resolves (the stream's PubAck), the entry is settled exactly once, in `seq`
 * order per session key, by whichever worker holds its partition. It passes `inboxConformance`.
 *
 * - **Where.** One work-queue stream (`stream`, default `SIGNALYARD_INBOX`) on subjects
 *   `<stream>.p<n>.<keyhash>`; `seq` is the stream sequence. One durable pull consumer per
 *   partition (explicit acks, `ack_wait` = `leaseMs`, `max_deliver` −1). KV buckets for
 *   partition leases, outcomes, dead letters, delivery counts and settled receipts; a limits
 *   stream `<stream>_EVENTS` for turn events (one subject per entry). The first use of an
 *   instance creates what is missing and checks what exists (a stream with another `partitions`
 *   is `INBOX_CONFIG_INVALID`); {@link JetStreamInbox.provision} does the same at deploy time.
 * - **Leases.** `acquire` leases session keys (`InboxLease.key` is the session key) as KV
 *   entries taken and renewed with compare-and-set, expiring `leaseMs` after their last write by
 *   the server's timestamp. The first worker to lease a key of a partition with no live holder
 *   also takes the partition's lease, recreates its consumer (it starts after the ack floor) and
 *   keeps what it pulled alive with `working()`; a redelivery it sees marks the partition lost
 *   (`LEASE_LOST` for this process's keys in it).
 * - **Dedupe** is the stream's duplicate window (`Nats-Msg-Id` = the SHA-256 of the id);
 *   **back-pressure** counts the messages left in the stream: in all through the stream's
 *   `max_msgs` (discard new), per key subject from the server's count at most a second old.
 *
 * Workers must share a durable checkpoint store (PostgreSQL for fleets): guarantee 2's
 * compare-and-set on `inboxSeq` is what makes a redelivery harmless.
 *
 * @example
 * ```ts
 * const inbox = new JetStreamInbox({ servers: 'nats://nats.internal:4222', partitions: 32 });
 * // no setup step: the first accept or acquire creates (or checks) the stream, consumers and buckets
 * const runner = createRunner({ agents, store: new PostgresCheckpointStore({ connectionString }), inbox, worker: true });
 * ```
 */
export class JetStreamInbox implements Inbox, InspectableInbox {
  /** Always `true`: entries survive process deaths (file storage on the server). */
  readonly durable = true;
  readonly #o: ResolvedJetStreamInboxOptions;
  readonly #names: JetStreamNames;
  #connection: Promise<InboxConnection> | undefined;
  #ready: Promise<Ready> | undefined;
  /** What `#ready` resolved to, for `accept` to publish without a microtask first. */
  #readyNow: Ready | undefined;
  #closed = false;
  readonly #h = newHolders();
  readonly #signals: InboxSignals;
  readonly #counts: PendingCounts;
  readonly #open = (): void => {
    if (this.#closed) throw inboxClosedError(NAME);
  };

  /**
   * Validates the options; connects on first use (nothing touches the network here).
   * @throws ConfigError `CONFIG_INVALID` listing every bad option.
   */
  constructor(options: JetStreamInboxOptions) {
    this.#o = resolveJetStreamInboxOptions(options);
    this.#names = jetStreamNames(this.#o.stream);
    this.#signals = new InboxSignals(() => this.#get(), this.#o.pollMs);
    this.#counts = new PendingCounts(this.#o.maxPendingPerSession);
  }

  /**
   * Creates or checks the streams, consumers and buckets the inbox uses, now: what the first use
   * of the inbox does anyway (accept, acquire, read, outcome, events, …), for a deploy step or a
   * process start that should fail early on a stream provisioned with other settings. Idempotent,
   * and safe from many processes at once; shares the first use's work (one check per instance,
   * retried by the next call when it failed). What exists is only checked: credentials that may
   * not create streams can open an inbox whose streams and buckets exist.
   * @throws InboxError `INBOX_CONFIG_INVALID` when an existing stream, consumer or bucket
   * contradicts the options (the message names the setting — `partitions`, `maxPending`, `dedupeWindowMs`,
   * `leaseMs`, `outcomeTtlMs` — with its value there and the inbox's); `INBOX_UNAVAILABLE`; `INBOX_CLOSED`.
   */
  async provision(): Promise<void> {
    this.#open();
    await this.#get();
  }

  #connect(): Promise<InboxConnection> {
    this.#connection ??= InboxConnection.open(this.#o).catch((error: unknown) => {
      this.#connection = undefined;
      throw unavailable('connect', error);
    });
    return this.#connection;
  }

  async #prepare(c: InboxConnection, buckets: InboxBuckets): Promise<Ready> {
    const before = Date.now();
    await buckets.leases.put('clock', '');
    const stamped = await buckets.leases.get('clock');
    c.calibrate(before, Date.now(), stamped?.created.getTime() ?? Date.now());
    const r: Ready = {
      c,
      buckets,
      leases: new KvLeases(buckets.leases, () => c.now()),
      names: this.#names,
      partitions: this.#o.partitions,
    };
    if (this.#closed) await c.close();
    else this.#readyNow = r;
    return r;
  }

  /** The connected, provisioned inbox: created or checked once per instance, by its first use (concurrent first calls share it; a failure is retried by the next call). */
  #get(): Promise<Ready> {
    this.#ready ??= (async () => {
      const c = await this.#connect();
      return this.#prepare(c, await provisionInbox(c.jsm, c.kvm, this.#names, this.#o));
    })().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  /** See `Inbox.accept`. */
  async accept(entry: InboxAcceptEntry): Promise<InboxReceipt> {
    this.#open();
    const checked = checkAccept(entry);
    // Without a wait on the way (a ready inbox, a fresh pending count), the publish leaves in the
    // caller's own turn: accepts made together go out in one write.
    const r = this.#readyNow ?? (await this.#get());
    const { sessionKey } = checked;
    if (!r.c.isUp()) throw unavailable('accept the entry', new Error('the connection to the server is down'));
    const { subject } = place(r, sessionKey);
    const msgId = msgIdOf(checked.id);
    const full = this.#counts.full(r, subject);
    if (full !== false && (await full)) return this.#full(r, sessionKey, msgId, 'session');
    const uuid = randomUUID();
    const acceptedAt = new Date(r.c.now()).toISOString();
    const fields = {
      k: sessionKey,
      r: uuid,
      at: acceptedAt,
      ...(checked.agentId !== undefined && { a: checked.agentId }),
      ...(checked.control !== undefined && { c: checked.control }),
    };
    let ack: PubAck;
    try {
      ack = await r.c.js.publish(subject, entryBody(fields, checked.signalText), {
        msgID: msgId,
        timeout: this.#o.publishTimeoutMs,
        expect: { streamName: this.#o.stream },
      });
    } catch (error) {
      if (isApiCode(error, 10077) || /maximum messages exceeded/i.test(String(error))) {
        return this.#full(r, sessionKey, msgId, 'inbox'); // the stream's max_msgs (maxPending) with discard new
      }
      if (isApiCode(error, 10060) || /no responders|503/i.test(String(error)))
        throw unavailable('append the entry', error);
      if (isTimeout(error) || !r.c.isUp()) throw outcomeUnknown(sessionKey, error);
      throw unavailable('append the entry', error);
    }
    const receipt = ack.duplicate
      ? await duplicateReceipt(r, ack.seq, msgId, sessionKey)
      : { receiptId: `${ack.seq}-${uuid}`, sessionKey, seq: String(ack.seq), acceptedAt };
    if (!ack.duplicate) this.#counts.accepted(subject);
    this.#signals.entry(r, sessionKey);
    return receipt;
  }

  /** A full inbox or session: the receipt when `msgId` was accepted before (a retry), else `INBOX_FULL`. */
  async #full(r: Ready, sessionKey: string, msgId: string, scope: 'session' | 'inbox'): Promise<InboxReceipt> {
    const known = await knownReceipt(r, sessionKey, msgId).catch((error: unknown) => {
      throw unavailable('look the id up', error);
    });
    if (known !== undefined) return known;
    const limit = scope === 'session' ? this.#o.maxPendingPerSession : this.#o.maxPending;
    throw inboxFullError(sessionKey, scope, limit, this.#o.retryAfterMs);
  }

  /** See `Inbox.acquire`: leases on session keys of the partitions this worker takes (or holds). */
  async acquire(workerId: string, opts: { leaseMs: number; max: number }): Promise<InboxLease[]> {
    this.#open();
    assertAcquire(workerId, opts);
    const r = await this.#get();
    const leases = await acquireLeases(r, this.#h, this.#o, workerId, opts.leaseMs, opts.max).catch(
      (error: unknown) => {
        throw unavailable('acquire leases', error);
      },
    );
    // Taken here: a release before any read knows that nothing was begun under them (else it reads every entry of the key).
    for (const lease of leases) deliveries.reading(lease.token);
    return leases;
  }

  #token(lease: InboxLease): KeyLeaseToken {
    assertLease(lease);
    const token = parseKeyLeaseToken(lease.token);
    if (token === undefined || token.partition >= this.#o.partitions) {
      throw inboxInputError('lease token', lease.token, 'a lease from a JetStreamInbox acquire() over the same stream');
    }
    return token;
  }

  /** Whether the key lease of `sessionKey` with parsed `token` is live now (and its partition not lost in this process). */
  async #held(r: Ready, sessionKey: string, token: KeyLeaseToken): Promise<boolean> {
    if (this.#h.holders.get(token.partition)?.lost === true) return false;
    const name = `k${place(r, sessionKey).hash}`;
    if (r.leases.heldHere(name, token.token)) return true;
    const state = await r.leases.state(name);
    return state.live?.t === token.token;
  }

  /** See `Inbox.renew`: the key's lease, by compare-and-set; also takes over the partition's consumer when its holder is gone. */
  async renew(lease: InboxLease): Promise<boolean> {
    this.#open();
    const token = this.#token(lease);
    const r = await this.#get();
    try {
      // The partition's holder is looked at again after the KV round trip: one found lost meanwhile
      // would otherwise be replaced by ensureHolder below, and the key lease would outlive it.
      const holder = this.#h.holders.get(token.partition);
      const lost = (): boolean => holder?.lost === true;
      const renewed = !lost() && (await r.leases.renew(`k${place(r, lease.key).hash}`, token.token));
      const held = renewed && !lost();
      if (!held) {
        await dropKeyLease(r, this.#h, token.partition);
        return false;
      }
      await ensureHolder(r, this.#h, this.#o, token.partition, lease.workerId);
      return true;
    } catch (error) {
      throw unavailable('renew the lease', error);
    }
  }

  /** See `Inbox.release`: the key's lease is given up (the deliveries begun under it do not count); the partition's too when this process holds no other key in it. */
  async release(lease: InboxLease): Promise<void> {
    this.#open();
    const token = this.#token(lease);
    const r = await this.#get();
    try {
      if (!(await this.#held(r, lease.key, token))) return;
      await rollbackDeliveries(r, lease.key, lease.token, deliveries.takeBegun(lease.token));
      if (await r.leases.giveUp(`k${place(r, lease.key).hash}`, token.token))
        await dropKeyLease(r, this.#h, token.partition);
    } catch (error) {
      throw unavailable('release the lease', error);
    }
  }

  /** See `Inbox.read`: direct gets on the key's subject, in stream order. */
  read(lease: InboxLease, afterSeq?: string): AsyncIterable<InboxEntry> {
    return readLeased(this.#open, lease, afterSeq, (after) => this.#page(lease, after), readUnder);
  }

  async #page(lease: InboxLease, after: string): Promise<readonly InboxEntry[] | undefined> {
    const token = this.#token(lease);
    deliveries.reading(lease.token);
    const r = await this.#get();
    try {
      if (!(await this.#held(r, lease.key, token))) return undefined;
      return await deliveries.page(r, lease.key, after);
    } catch (error) {
      throw unavailable('read the entries', error);
    }
  }

  /** See `Inbox.beginDelivery`: a compare-and-set counter per entry in the attempts bucket. */
  async beginDelivery(entry: InboxEntry): Promise<number> {
    this.#open();
    assertEntry(entry);
    const r = await this.#get();
    const under = readUnder.get(entry);
    try {
      if (under !== undefined) {
        const token = parseKeyLeaseToken(under);
        if (token === undefined || !(await this.#held(r, entry.sessionKey, token))) {
          throw leaseLostError(entry.sessionKey, 'it expired or was taken over before the delivery began');
        }
      }
      const seq = Number(entry.seq);
      // Still in the stream? This process's holder of the partition knows without a request when
      // it pulled the entry and has not acknowledged it (work-queue retention: only an ack or a
      // delete removes it; a late delete by a stale worker is guarantee 2's to refuse).
      const pulled = this.#h.holders.get(place(r, entry.sessionKey).partition)?.has(seq) === true;
      if (!pulled && (await storedEntry(r.c.jsm, this.#o.stream, entry.receiptId)) === undefined) {
        throw entrySettledError(entry.receiptId);
      }
      const count = await countDelivery(r.buckets.attempts, seq, under ?? '', deliveries.last(entry));
      deliveries.begun(entry, under, count);
      return count.n;
    } catch (error) {
      throw unavailable('count the delivery', error);
    }
  }

  /** See `Inbox.ack`: through the partition's consumer when this process pulled the entry, else by deleting it from the stream. */
  async ack(entry: InboxEntry): Promise<void> {
    this.#open();
    assertEntry(entry);
    const r = await this.#get();
    try {
      await acknowledge(this.#parts(r), entry);
    } catch (error) {
      throw unavailable('acknowledge the entry', error);
    }
  }

  /** See `Inbox.putOutcome`: the outcomes bucket, compare-and-set so that the first outcome stays. */
  async putOutcome(receiptId: string, outcome: OutcomeJson, ttlMs: number): Promise<void> {
    this.#open();
    assertInboxId(receiptId, 'receipt id');
    const text = outcomeText(receiptId, outcome);
    assertTtl(ttlMs);
    const r = await this.#get();
    try {
      await storeOutcome(this.#parts(r), receiptId, text, isPoisonedOutcome(outcome), ttlMs);
    } catch (error) {
      throw unavailable('store the outcome', error);
    }
  }

  /**
   * See `Inbox.settle`: the last events, the outcome and the entry's dedupe receipt sent together
   * and awaited once, then the ack (the outcome is stored before the entry is acknowledged).
   */
  async settle(entry: InboxEntry, outcome: OutcomeJson, ttlMs: number, events?: InboxSettleEvents): Promise<void> {
    this.#open();
    const checked = checkSettle(entry, outcome, ttlMs, events);
    const r = await this.#get();
    try {
      await settleEntry(this.#parts(r), entry, checked, ttlMs);
    } catch (error) {
      throw unavailable('settle the entry', error);
    }
  }

  #parts(r: Ready): SettleParts {
    return { r, h: this.#h, stream: this.#o.stream, signals: this.#signals, deliveries, readUnder };
  }

  /** See `Inbox.outcome`. */
  outcome(receiptId: string, opts?: { abortSignal?: AbortSignal; timeoutMs?: number }): Promise<OutcomeJson> {
    return inboxOutcome(
      this.#open,
      receiptId,
      opts,
      async (id) =>
        lookupOutcome(await this.#get(), id).catch((e: unknown) =>
          Promise.reject(unavailable('look the outcome up', e)),
        ),
      this.#signals.wakeups,
    );
  }

  /** See `Inbox.publish`: the events stream, on the entry's own subject. */
  publish(receiptId: string, attempt: number, event: TurnEvent): Promise<void> {
    return this.#append(receiptId, attempt, () => [turnEventText(event)]);
  }

  /** See `Inbox.publishMany`: one look at the entry, the events published back to back, their acks awaited together. */
  publishMany(receiptId: string, attempt: number, events: readonly TurnEvent[]): Promise<void> {
    return this.#append(receiptId, attempt, () => turnEventTexts(events));
  }

  async #append(receiptId: string, attempt: number, made: () => string[]): Promise<void> {
    this.#open();
    assertInboxId(receiptId, 'receipt id');
    assertAttempt(attempt);
    const texts = made();
    if (texts.length === 0) return;
    const r = await this.#get();
    try {
      const message = await storedEntry(r.c.jsm, this.#o.stream, receiptId);
      if (message === undefined) throw entrySettledError(receiptId);
      const h = headers();
      h.set('Sy-Receipt', receiptId);
      const subject = eventSubject(r, message.seq);
      // One connection keeps publish order: the stream stores them in this order.
      await Promise.all(texts.map((text) => r.c.js.publish(subject, `${attempt}\n${text}`, { headers: h })));
      this.#signals.wakeups.wake(receiptId);
    } catch (error) {
      throw unavailable('publish the event', error);
    }
  }

  /** See `Inbox.events`. */
  events(ref: InboxStreamRef, opts?: { from?: string; abortSignal?: AbortSignal }): AsyncIterable<InboxStreamEvent> {
    return this.#events(ref, opts);
  }

  async *#events(ref: InboxStreamRef, opts: unknown): AsyncGenerator<InboxStreamEvent, void, undefined> {
    this.#open();
    const checked = checkEventsArgs(ref, opts);
    const r = await this.#get();
    try {
      yield* readEventLog(eventSource(r, this.#o.maxPendingPerSession), this.#signals.wakeups, checked);
    } catch (error) {
      throw unavailable('read the events', error);
    }
  }

  /** See `Inbox.notify`: a core NATS message on `<stream>_NOTICES` (not stored). */
  async notify(sessionKey: string, what: InboxNotice): Promise<void> {
    this.#open();
    assertInboxKey(sessionKey);
    assertNotice(what);
    const r = await this.#get();
    try {
      r.c.nc.publish(this.#names.notices, JSON.stringify({ k: sessionKey, w: what }));
      await r.c.nc.flush();
    } catch (error) {
      throw unavailable('send the notice', error);
    }
  }

  /** See `Inbox.onNotify`. */
  onNotify(listener: (sessionKey: string, what: InboxNotice) => void): () => void {
    if (this.#closed) return () => undefined;
    return this.#signals.listen(listener);
  }

  /** See `Inbox.deadLetters`. */
  deadLetters(opts?: { limit?: number }): AsyncIterable<InboxDeadLetter> {
    return this.#deadLetters(opts);
  }

  async *#deadLetters(opts: unknown): AsyncGenerator<InboxDeadLetter, void, undefined> {
    this.#open();
    const limit = checkLimit(opts, Number.MAX_SAFE_INTEGER);
    const r = await this.#get();
    const letters = await deadLetterList(r, limit).catch((error: unknown) => {
      throw unavailable('list the dead letters', error);
    });
    yield* letters;
  }

  /** See `InspectableInbox.pending`: direct gets over the waiting keys' subjects (an operator's view, not for hot paths). */
  async pending(opts?: { sessionKey?: string; limit?: number }): Promise<readonly InboxEntry[]> {
    this.#open();
    const { sessionKey, limit } = checkPendingOptions(opts);
    const r = await this.#get();
    return pendingEntries(r, sessionKey, limit).catch((error: unknown) => {
      throw unavailable('list the entries waiting', error);
    });
  }

  /** See `InspectableInbox.leases`: the live session-key leases of the lease bucket. */
  async leases(): Promise<readonly InboxLeaseInfo[]> {
    this.#open();
    const r = await this.#get();
    return liveKeyLeases(r).catch((error: unknown) => {
      throw unavailable('list the leases', error);
    });
  }

  /** See `Inbox.close`: stops pulling and listening; closes the connection when the inbox opened it. Leases, entries and outcomes stay on the server. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#signals.close(inboxClosedError(NAME));
    for (const holder of this.#h.holders.values()) holder.stop();
    this.#h.holders.clear();
    const c = await this.#connection?.catch(() => undefined);
    await c?.close().catch(() => undefined);
  }
}

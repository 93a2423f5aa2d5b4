import type { Clock } from './clock.js';
import type {
  Inbox,
  InboxAcceptEntry,
  InboxDeadLetter,
  InboxEntry,
  InboxLease,
  InboxLeaseInfo,
  InboxNotice,
  InboxReceipt,
  InboxSettleEvents,
  InboxStreamEvent,
  InboxStreamRef,
  InspectableInbox,
} from './inbox.js';
import { isoAt, readClock } from './internal/clock.js';
import { EventChannel } from './internal/event-channel.js';
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
  checkLimit,
  inboxClosedError,
  inboxFullError,
  isPoisonedOutcome,
  entrySettledError,
  leaseLostError,
  outcomeText,
  parseSignalText,
} from './internal/inbox-input.js';
import { compareInboxSeq } from './internal/inbox-seq.js';
import {
  readEventLog,
  turnEventText,
  turnEventTexts,
  type EventRow,
  type OutcomeLookup,
} from './internal/inbox-streams.js';
import { InboxWakeups } from './internal/inbox-wakeups.js';
import { checkPendingOptions, inboxOutcome, readLeased } from './internal/inbox-methods.js';
import { checkSettle } from './internal/inbox-settle.js';
import {
  resolveMemoryInboxOptions,
  type MemoryInboxOptions,
  type ResolvedMemoryInboxOptions,
} from './memory-inbox-options.js';
import type { OutcomeJson } from './outcome-json.js';
import type { TurnEvent } from './turn-event.js';

/** One entry as the inbox holds it. */
interface Stored {
  readonly receiptId: string;
  readonly sessionKey: string;
  readonly seq: number;
  readonly agentId: string | undefined;
  readonly signalText: string;
  readonly control: InboxEntry['control'];
  readonly acceptedAt: string;
  attempts: number;
  /** The token of the lease under which its current delivery began, if any. */
  deliveryToken: string | undefined;
}

/** One session key's state. */
interface KeyState {
  /** The last `seq` allocated (0: none yet); it keeps growing after every entry is settled. */
  lastSeq: number;
  /** Entries not yet acknowledged, in `seq` order. */
  readonly entries: Stored[];
  /** When `entries` last became non-empty (clock ms): who waits longest is acquired first. */
  waitingSince: number;
  lease: { readonly workerId: string; readonly token: string; expires: number; readonly leaseMs: number } | undefined;
}

/** How often (clock ms) expired outcomes, dedupe ids and dead letters are dropped, at most. */
const SWEEP_MS = 1000;
/** How many entries a `read` takes at a time. */
const READ_PAGE = 100;
const NAME = 'MemoryInbox';

/**
 * An {@link Inbox} in process memory, with the semantics of the durable transports — `seq` per
 * session key in accept order, dedupe ids, back-pressure, leases with expiry, durable-style
 * attempt counts, outcomes with a TTL, stream logs with offsets and attempts, notifications,
 * dead letters — so code tested against it behaves the same on SQLite, PostgreSQL or JetStream.
 * `durable` is `true` for that reason, but everything is lost when the process exits: use it
 * for tests and single-process programs whose callers may lose accepted work.
 *
 * Time (lease expiry, outcome and dedupe retention, `acceptedAt`) is read from `clock`, so a
 * test moves it instead of waiting; `outcome()`'s `timeoutMs` runs on timers (fake timers drive
 * it). Notices reach the listeners of this instance only.
 *
 * @throws ConfigError `CONFIG_INVALID` listing every bad option.
 * @example
 * ```ts
 * import { MemoryInbox } from '@signalyard/core';
 *
 * const inbox = new MemoryInbox();
 * const receipt = await inbox.accept({ sessionKey: 'agent:desk:main', signal: { kind: 'user_message', payload: 'hi' }, id: 'req-1' });
 * const [lease] = await inbox.acquire('worker-1', { leaseMs: 30_000, max: 1 });
 * for await (const entry of inbox.read(lease!)) {
 *   await inbox.beginDelivery(entry);
 *   // … apply it, save the checkpoint with inboxSeq = entry.seq …
 *   await inbox.putOutcome(entry.receiptId, outcomeToJson(outcome), 600_000);
 *   await inbox.ack(entry);
 * }
 * console.log(await inbox.outcome(receipt.receiptId));
 * ```
 */
export class MemoryInbox implements Inbox, InspectableInbox {
  /** `true`: the semantics of a durable inbox (in memory). */
  readonly durable = true;
  readonly #options: ResolvedMemoryInboxOptions;
  readonly #clock: Clock;
  readonly #keys = new Map<string, KeyState>();
  /** Keys with entries waiting. */
  readonly #waiting = new Set<string>();
  readonly #byReceipt = new Map<string, Stored>();
  #pendingTotal = 0;
  readonly #dedupe = new Map<string, { readonly receipt: InboxReceipt; readonly expires: number }>();
  readonly #outcomes = new Map<string, { readonly text: string; readonly expires: number }>();
  readonly #dead = new Map<string, { readonly entry: Stored; readonly attempts: number; readonly expires: number }>();
  readonly #events = new Map<string, EventRow[]>();
  #lastOffset = 0;
  /** The lease token each entry handed out by `read` was read under. */
  readonly #readUnder = new WeakMap<InboxEntry, string>();
  readonly #notices = new EventChannel<readonly [string, InboxNotice]>();
  readonly #wakeups = new InboxWakeups();
  #lastSweep = Number.NEGATIVE_INFINITY;
  #closed = false;

  /** Throws `INBOX_CLOSED` once closed (a field, so that it can be handed to the shared helpers). */
  readonly #open = (): void => {
    if (this.#closed) throw inboxClosedError(NAME);
  };

  constructor(options?: MemoryInboxOptions) {
    this.#options = resolveMemoryInboxOptions(options);
    this.#clock = this.#options.clock;
  }

  /** See {@link Inbox.accept}. */
  async accept(entry: InboxAcceptEntry): Promise<InboxReceipt> {
    this.#open();
    const input = checkAccept(entry);
    const now = this.#now();
    this.#sweep(now);
    const seen = this.#dedupe.get(input.id);
    if (seen !== undefined && seen.expires > now) return { ...seen.receipt };
    const { sessionKey } = input;
    const state = this.#keys.get(sessionKey) ?? { lastSeq: 0, entries: [], waitingSince: now, lease: undefined };
    const { maxPendingPerSession, maxPending, retryAfterMs } = this.#options;
    if (state.entries.length >= maxPendingPerSession) {
      throw inboxFullError(sessionKey, 'session', maxPendingPerSession, retryAfterMs);
    }
    if (this.#pendingTotal >= maxPending) throw inboxFullError(sessionKey, 'inbox', maxPending, retryAfterMs);
    this.#keys.set(sessionKey, state);
    state.lastSeq++;
    const stored: Stored = {
      receiptId: globalThis.crypto.randomUUID(),
      sessionKey,
      seq: state.lastSeq,
      agentId: input.agentId,
      signalText: input.signalText,
      control: input.control,
      acceptedAt: isoAt(now),
      attempts: 0,
      deliveryToken: undefined,
    };
    if (state.entries.length === 0) state.waitingSince = now;
    state.entries.push(stored);
    this.#waiting.add(sessionKey);
    this.#byReceipt.set(stored.receiptId, stored);
    this.#pendingTotal++;
    const receipt = receiptOf(stored);
    this.#dedupe.set(input.id, { receipt, expires: now + this.#options.dedupeWindowMs });
    this.#notices.emit([sessionKey, 'entry']);
    return { ...receipt };
  }

  /** See {@link Inbox.acquire}. */
  async acquire(workerId: string, opts: { leaseMs: number; max: number }): Promise<InboxLease[]> {
    this.#open();
    assertAcquire(workerId, opts);
    const now = this.#now();
    const free: KeyState[] = [];
    const keys: string[] = [];
    for (const key of this.#waiting) {
      const state = this.#keys.get(key) as KeyState;
      if (state.lease === undefined || state.lease.expires <= now) {
        free.push(state);
        keys.push(key);
      }
    }
    const order = free
      .map((_, i) => i)
      .sort((a, b) => (free[a] as KeyState).waitingSince - (free[b] as KeyState).waitingSince || a - b);
    const leases: InboxLease[] = [];
    for (const i of order.slice(0, opts.max)) {
      const state = free[i] as KeyState;
      const lease = {
        workerId,
        token: globalThis.crypto.randomUUID(),
        expires: now + opts.leaseMs,
        leaseMs: opts.leaseMs,
      };
      state.lease = lease;
      leases.push({ key: keys[i] as string, workerId, token: lease.token, expiresAt: isoAt(lease.expires) });
    }
    return leases;
  }

  /** See {@link Inbox.renew}. */
  async renew(lease: InboxLease): Promise<boolean> {
    this.#open();
    assertLease(lease);
    const now = this.#now();
    const held = this.#live(lease, now);
    if (held === undefined) return false;
    held.expires = now + held.leaseMs;
    return true;
  }

  /** See {@link Inbox.release}. */
  async release(lease: InboxLease): Promise<void> {
    this.#open();
    assertLease(lease);
    const state = this.#keys.get(lease.key);
    const held = state?.lease;
    if (state === undefined || held?.token !== lease.token) return;
    if (held.expires > this.#now()) {
      for (const entry of state.entries) {
        if (entry.deliveryToken === lease.token) {
          entry.attempts--;
          entry.deliveryToken = undefined;
        }
      }
    }
    state.lease = undefined;
  }

  /** See {@link Inbox.read}. */
  read(lease: InboxLease, afterSeq?: string): AsyncIterable<InboxEntry> {
    const page = (after: string): InboxEntry[] | undefined => {
      if (this.#live(lease, this.#now()) === undefined) return undefined;
      const last = Number(after);
      const entries = this.#keys.get(lease.key)?.entries ?? [];
      return entries
        .filter((e) => e.seq > last)
        .slice(0, READ_PAGE)
        .map(entryOf);
    };
    return readLeased(this.#open, lease, afterSeq, page, this.#readUnder);
  }

  /** See {@link Inbox.beginDelivery}. */
  async beginDelivery(entry: InboxEntry): Promise<number> {
    this.#open();
    assertEntry(entry);
    const stored = this.#byReceipt.get(entry.receiptId);
    if (stored === undefined) throw entrySettledError(entry.receiptId);
    const token = this.#readUnder.get(entry);
    if (token !== undefined) {
      const lease = this.#keys.get(stored.sessionKey)?.lease;
      if (lease?.token !== token || lease.expires <= this.#now()) {
        throw leaseLostError(stored.sessionKey, 'it expired or was taken over before the delivery began');
      }
    }
    stored.attempts++;
    stored.deliveryToken = token;
    return stored.attempts;
  }

  /** See {@link Inbox.ack}. */
  async ack(entry: InboxEntry): Promise<void> {
    this.#open();
    assertEntry(entry);
    const stored = this.#byReceipt.get(entry.receiptId);
    if (stored === undefined) return;
    const state = this.#keys.get(stored.sessionKey) as KeyState;
    const index = state.entries.indexOf(stored);
    state.entries.splice(index, 1);
    if (state.entries.length === 0) this.#waiting.delete(stored.sessionKey);
    this.#byReceipt.delete(stored.receiptId);
    this.#pendingTotal--;
    if (this.#liveOutcome(stored.receiptId, this.#now()) === undefined) this.#events.delete(stored.receiptId);
    this.#wakeups.wake(stored.receiptId);
  }

  /** See {@link Inbox.putOutcome}. */
  async putOutcome(receiptId: string, outcome: OutcomeJson, ttlMs: number): Promise<void> {
    this.#open();
    assertInboxId(receiptId, 'receipt id');
    assertTtl(ttlMs);
    const text = outcomeText(receiptId, outcome);
    const now = this.#now();
    this.#sweep(now);
    if (this.#liveOutcome(receiptId, now) !== undefined) return;
    this.#outcomes.set(receiptId, { text, expires: now + ttlMs });
    const stored = this.#byReceipt.get(receiptId);
    if (stored !== undefined && isPoisonedOutcome(outcome)) {
      this.#dead.set(receiptId, { entry: stored, attempts: stored.attempts, expires: now + ttlMs });
    }
    this.#wakeups.wake(receiptId);
  }

  /** See {@link Inbox.settle}: the last events, the outcome and the acknowledgement, checked first, written together. */
  async settle(entry: InboxEntry, outcome: OutcomeJson, ttlMs: number, events?: InboxSettleEvents): Promise<void> {
    this.#open();
    const c = checkSettle(entry, outcome, ttlMs, events);
    if (c.eventTexts.length > 0 && this.#byReceipt.has(c.receiptId)) {
      await this.#append(c.receiptId, c.attempt, () => [...c.eventTexts]);
    }
    await this.putOutcome(c.receiptId, outcome, ttlMs);
    await this.ack(entry);
  }

  /** See {@link Inbox.outcome}. */
  outcome(receiptId: string, opts?: { abortSignal?: AbortSignal; timeoutMs?: number }): Promise<OutcomeJson> {
    return inboxOutcome(this.#open, receiptId, opts, (id) => this.#lookup(id), this.#wakeups);
  }

  #lookup(receiptId: string): OutcomeLookup {
    this.#open();
    const text = this.#liveOutcome(receiptId, this.#now());
    if (text !== undefined) return { outcome: JSON.parse(text) as OutcomeJson };
    return this.#byReceipt.has(receiptId) ? 'pending' : 'gone';
  }

  /** See {@link Inbox.publish}. */
  publish(receiptId: string, attempt: number, event: TurnEvent): Promise<void> {
    return this.#append(receiptId, attempt, () => [turnEventText(event)]);
  }

  /** See {@link Inbox.publishMany}. */
  publishMany(receiptId: string, attempt: number, events: readonly TurnEvent[]): Promise<void> {
    return this.#append(receiptId, attempt, () => turnEventTexts(events));
  }

  async #append(receiptId: string, attempt: number, texts: () => string[]): Promise<void> {
    this.#open();
    assertInboxId(receiptId, 'receipt id');
    assertAttempt(attempt);
    const added = texts();
    if (added.length === 0) return;
    const stored = this.#byReceipt.get(receiptId);
    if (stored === undefined) throw entrySettledError(receiptId);
    let log = this.#events.get(receiptId);
    if (log === undefined) {
      log = [];
      this.#events.set(receiptId, log);
    }
    for (const text of added) log.push({ offset: String(++this.#lastOffset), attempt, text });
    this.#wakeups.wake(receiptId);
  }

  /** See {@link Inbox.events}. */
  async *events(
    ref: InboxStreamRef,
    opts?: { from?: string; abortSignal?: AbortSignal },
  ): AsyncGenerator<InboxStreamEvent, void, undefined> {
    this.#open();
    const args = checkEventsArgs(ref, opts);
    yield* readEventLog(
      {
        page: (receiptId, after, limit) => {
          this.#open();
          const log = this.#events.get(receiptId) ?? [];
          const from = after === undefined ? 0 : log.findIndex((row) => compareInboxSeq(row.offset, after) > 0);
          return { rows: from === -1 ? [] : log.slice(from, from + limit), live: this.#byReceipt.has(receiptId) };
        },
        inFlight: (sessionKey) => {
          const entries = this.#keys.get(sessionKey)?.entries ?? [];
          for (let i = entries.length - 1; i >= 0; i--) {
            const { receiptId } = entries[i] as Stored;
            if ((this.#events.get(receiptId)?.length ?? 0) > 0) return receiptId;
          }
          return undefined;
        },
      },
      this.#wakeups,
      args,
    );
  }

  /** See {@link Inbox.notify}. */
  async notify(sessionKey: string, what: InboxNotice): Promise<void> {
    this.#open();
    assertInboxKey(sessionKey);
    assertNotice(what);
    this.#notices.emit([sessionKey, what]);
  }

  /** See {@link Inbox.onNotify}. */
  onNotify(listener: (sessionKey: string, what: InboxNotice) => void): () => void {
    if (this.#closed) return noop;
    return this.#notices.on(([key, what]) => {
      listener(key, what);
    });
  }

  /** See {@link Inbox.deadLetters}. */
  async *deadLetters(opts?: { limit?: number }): AsyncGenerator<InboxDeadLetter, void, undefined> {
    this.#open();
    const limit = checkLimit(opts, Number.POSITIVE_INFINITY);
    const now = this.#now();
    const letters: InboxDeadLetter[] = [];
    for (const [receiptId, dead] of this.#dead) {
      if (letters.length >= limit) break;
      const text = this.#liveOutcome(receiptId, now);
      if (dead.expires <= now || text === undefined) continue;
      letters.push({
        entry: { ...entryOf(dead.entry), attempts: dead.attempts },
        outcome: JSON.parse(text) as OutcomeJson,
      });
    }
    yield* letters;
  }

  /** See {@link InspectableInbox.pending}. */
  async pending(opts?: { sessionKey?: string; limit?: number }): Promise<readonly InboxEntry[]> {
    this.#open();
    const { sessionKey: only, limit } = checkPendingOptions(opts);
    const keys = only === undefined ? [...this.#waiting].sort(byCodePoint) : this.#waiting.has(only) ? [only] : [];
    const out: InboxEntry[] = [];
    for (const key of keys) {
      for (const stored of (this.#keys.get(key) as KeyState).entries) {
        if (out.length >= limit) return out;
        out.push(entryOf(stored));
      }
    }
    return out;
  }

  /** See {@link InspectableInbox.leases}. */
  async leases(): Promise<readonly InboxLeaseInfo[]> {
    this.#open();
    const now = this.#now();
    const out: InboxLeaseInfo[] = [];
    for (const [key, state] of this.#keys) {
      const lease = state.lease;
      if (lease !== undefined && lease.expires > now) {
        out.push({ key, workerId: lease.workerId, expiresAt: isoAt(lease.expires) });
      }
    }
    return out.sort((a, b) => byCodePoint(a.key, b.key));
  }

  /** See {@link Inbox.close}. Everything in the inbox is dropped with it. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#wakeups.close(inboxClosedError(NAME));
    this.#notices.end();
    return Promise.resolve();
  }

  /** The time, from the clock (checked: `CLOCK_INVALID` for a clock that gives no time). */
  #now(): number {
    return readClock(this.#clock);
  }

  /** The live lease `lease` names (same token, not expired), or `undefined`. */
  #live(lease: InboxLease, now: number): KeyState['lease'] {
    const held = this.#keys.get(lease.key)?.lease;
    return held?.token === lease.token && held.expires > now ? held : undefined;
  }

  #liveOutcome(receiptId: string, now: number): string | undefined {
    const outcome = this.#outcomes.get(receiptId);
    return outcome !== undefined && outcome.expires > now ? outcome.text : undefined;
  }

  /** Drops expired dedupe ids, outcomes (with their stream logs) and dead letters, at most once per {@link SWEEP_MS}. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_MS) return;
    this.#lastSweep = now;
    for (const [id, seen] of this.#dedupe) if (seen.expires <= now) this.#dedupe.delete(id);
    for (const [receiptId, outcome] of this.#outcomes) {
      if (outcome.expires > now) continue;
      this.#outcomes.delete(receiptId);
      if (!this.#byReceipt.has(receiptId)) this.#events.delete(receiptId);
    }
    for (const [receiptId, dead] of this.#dead) if (dead.expires <= now) this.#dead.delete(receiptId);
  }
}

function receiptOf(stored: Stored): InboxReceipt {
  return {
    receiptId: stored.receiptId,
    sessionKey: stored.sessionKey,
    seq: String(stored.seq),
    acceptedAt: stored.acceptedAt,
  };
}

function entryOf(stored: Stored): InboxEntry {
  return {
    ...receiptOf(stored),
    ...(stored.agentId !== undefined && { agentId: stored.agentId }),
    signal: parseSignalText(stored.signalText),
    attempts: stored.attempts,
    ...(stored.control !== undefined && { control: stored.control }),
  };
}

/** Code point order (UTF-8 byte order), as the SQL transports sort keys. */
function byCodePoint(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

function noop(): void {
  // the inbox is closed: nothing to unsubscribe
}

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Inbox, InboxEntry, InboxLease, InboxReceipt, InboxStreamEvent, SignalJson } from '../inbox.js';
import type { OutcomeJson } from '../outcome-json.js';
import type { TurnEvent } from '../turn-event.js';
import { isSignalyardError } from '../errors/signalyard-error.js';
import { ConfigError } from '../errors/config-error.js';
import { describeValue } from '../signal.js';

/** What the conformance suite asks a factory for: limits some cases need small. */
export interface InboxFactoryOptions {
  /** Pass on as the transport's `maxPendingPerSession` (the transport's default when absent). */
  readonly maxPendingPerSession?: number;
  /** Pass on as the transport's `maxPending` (the transport's default when absent). */
  readonly maxPending?: number;
  /** Pass on as the transport's `dedupeWindowMs` (the transport's default when absent). */
  readonly dedupeWindowMs?: number;
}

/** What a factory gives the conformance suite for one case. */
export interface InboxUnderTest {
  /** A fresh inbox over fresh, isolated storage (no entries, leases, outcomes or dedupe ids of another case). */
  readonly inbox: Inbox;
  /**
   * Opens another inbox over the same storage (another connection, another instance), as a
   * second process would; omit it when the transport cannot (`MemoryInbox`). Cases about
   * several processes (an outcome put by one and awaited by another, notices, counts) run
   * across the two when it is given, and on the one inbox otherwise.
   */
  readonly another?: () => Inbox | Promise<Inbox>;
  /**
   * Moves the inbox's clock forward by `ms` (a transport with an injectable clock, such as
   * `MemoryInbox`); without it, the suite waits for real time to pass, with short durations.
   */
  readonly advanceTime?: (ms: number) => void | Promise<void>;
  /** Runs after the case, after every inbox was closed (drop the case's tables, remove its file). */
  readonly cleanup?: () => void | Promise<void>;
}

/**
 * Makes fresh, isolated storage and an inbox over it for one conformance case, with the limits
 * the case asks for: the inbox itself (as `checkpointStoreConformance`'s factory returns the
 * store), or an {@link InboxUnderTest} when the suite should also open a second instance over
 * the same storage, move the clock, or clean up after the case.
 */
export type InboxFactory = (options: InboxFactoryOptions) => Inbox | InboxUnderTest | Promise<Inbox | InboxUnderTest>;

/** What a factory returned, as an {@link InboxUnderTest} (a bare inbox is `{ inbox }`). @internal */
export function underTest(made: Inbox | InboxUnderTest): InboxUnderTest {
  if (typeof made === 'object' && (made as unknown) !== null) {
    if (typeof (made as Inbox).accept === 'function') return { inbox: made as Inbox };
    if (typeof (made as Partial<InboxUnderTest>).inbox?.accept === 'function') return made as InboxUnderTest;
  }
  throw new ConfigError({
    problems: [
      {
        path: 'factory',
        message: `inboxConformance's factory must return an Inbox or { inbox, another?, advanceTime?, cleanup? }, got ${describeValue(made)}`,
      },
    ],
  });
}

/** One case's view of the transport under test. */
export interface InboxCase {
  /** The case's inbox. */
  readonly inbox: Inbox;
  /** Another inbox over the same storage, or — when the transport cannot make one — `inbox` itself. */
  another(): Promise<Inbox>;
  /** True when {@link InboxCase.another} gives a distinct instance. */
  readonly hasAnother: boolean;
  /** Lets `ms` of the inbox's time pass (its clock moved, or real time waited for). */
  elapse(ms: number): Promise<void>;
}

/** Registers one case run against fresh storage made with `options`. */
export type InboxTest = (title: string, fn: (t: InboxCase) => Promise<void>, options?: InboxFactoryOptions) => void;

/** A user message as a signal's JSON. */
export function text(payload: string): SignalJson {
  return { kind: 'user_message', payload };
}

/** A fresh dedupe id. */
export function newId(): string {
  return `id-${randomUUID()}`;
}

/** Accepts `count` user messages `<label>0`, `<label>1`, … for `sessionKey`, one after the other. */
export async function acceptMany(
  inbox: Inbox,
  sessionKey: string,
  count: number,
  label = 'm',
): Promise<InboxReceipt[]> {
  const receipts: InboxReceipt[] = [];
  for (let i = 0; i < count; i++) {
    receipts.push(await inbox.accept({ sessionKey, signal: text(`${label}${i}`), id: newId() }));
  }
  return receipts;
}

/** Every item of an async iterable, in order. */
export async function drain<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** The entries `read(lease, afterSeq)` yields. */
export function readAll(inbox: Inbox, lease: InboxLease, afterSeq?: string): Promise<InboxEntry[]> {
  return drain(inbox.read(lease, afterSeq));
}

/** Takes the lease on `key` for `workerId` (every other key with entries is leased too, and released). */
export async function leaseOn(inbox: Inbox, key: string, workerId = 'worker-a', leaseMs = 60_000): Promise<InboxLease> {
  const leases = await inbox.acquire(workerId, { leaseMs, max: 1000 });
  const lease = leases.find((l) => l.key === key);
  for (const other of leases) if (other !== lease) await inbox.release(other);
  assert.ok(
    lease !== undefined,
    `acquire gave no lease on ${JSON.stringify(key)} (got ${JSON.stringify(leases.map((l) => l.key))})`,
  );
  return lease;
}

/** A completed outcome for `sessionKey`, as JSON. */
export function doneOutcome(sessionKey: string, output: unknown = { reply: 'ok' }): OutcomeJson {
  return { sessionKey, agentId: 'agent', status: 'completed', output: output as OutcomeJson['output'] };
}

/** Settles `entry` as a worker does after its checkpoint save: its delivery was begun; puts its outcome, then acknowledges it. */
export async function settle(inbox: Inbox, entry: InboxEntry, outcome = doneOutcome(entry.sessionKey)): Promise<void> {
  await inbox.putOutcome(entry.receiptId, outcome, 60_000);
  await inbox.ack(entry);
}

/** Asserts that `promise` rejects with a SignalyardError of `code`; returns it. */
export async function rejects(promise: Promise<unknown>, code: string): Promise<Error & { code: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isSignalyardError(error), `expected a SignalyardError with code ${code}, got ${String(error)}`);
    assert.equal(error.code, code, `expected code ${code}, got ${error.code}: ${error.message}`);
    return error;
  }
  assert.fail(`expected a rejection with code ${code}, but the promise resolved`);
}

/**
 * What `fn` fails with — a synchronous throw, a rejection, or the first step of a returned async
 * iterable failing — asserted to be a SignalyardError of `code`.
 */
export async function fails(fn: () => unknown, code: string): Promise<Error & { code: string }> {
  return rejects(
    (async () => {
      const result = fn();
      if (typeof result === 'object' && result !== null && Symbol.asyncIterator in result) {
        await (result as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
      } else {
        await result;
      }
    })(),
    code,
  );
}

/** Resolves after `ms` of real time. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` (every 10 ms of real time, moving `t`'s time as much) until it returns true; fails after `ms` real milliseconds. */
export async function eventually(
  t: InboxCase,
  check: () => Promise<boolean> | boolean,
  what: string,
  ms = 10_000,
): Promise<void> {
  const start = Date.now();
  for (;;) {
    if (await check()) return;
    if (Date.now() - start > ms) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await t.elapse(10);
  }
}

/** A deterministic pseudo-random number generator (mulberry32): the same `seed`, the same numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** Numeric order of two decimal `seq` strings. */
export function seqOrder(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/** A session key no other case uses. */
export function newKey(label = 'session'): string {
  return `agent:conformance:${label}-${randomUUID()}`;
}

/** A `text_delta` event of the agent `desk`. */
export const delta = (text: string): TurnEvent => ({ type: 'text_delta', agentId: 'desk', delta: text });

/** An `outcome` event: the turn of `sessionKey` completed. */
export function outcomeEvent(sessionKey: string): TurnEvent {
  return {
    type: 'outcome',
    outcome: { sessionKey, agentId: 'desk', action: { type: 'continue' }, decidedBy: undefined, status: 'completed' },
  };
}

/** `<attempt>:<delta text>` for deltas, `<attempt>:<type>` for the others. */
export function shown(events: readonly InboxStreamEvent[]): string[] {
  return events.map(({ event, attempt }) =>
    event.type === 'text_delta' ? `${attempt}:${event.delta}` : `${attempt}:${event.type}`,
  );
}

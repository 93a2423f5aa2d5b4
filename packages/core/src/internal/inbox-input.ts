import { serializeCheckpointData } from './checkpoint-data.js';
import { unstorableTextIndex } from './checkpoint-text.js';
import { InboxError } from '../errors/inbox-error.js';
import type { InboxAcceptEntry, InboxEntry, InboxLease, InboxNotice, InboxStreamRef } from '../inbox.js';
import { describeValue, isSignalKind, type SignalKind } from '../signal.js';
import { errorText } from './error-text.js';
import { isInboxSeq } from './inbox-seq.js';
import { MAX_TIMEOUT_MS } from './timers.js';
import { isRecord } from './values.js';

/** The longest session key an inbox takes, in UTF-16 code units (the sessions package's cap; it keeps a PostgreSQL notification under its size limit). */
export const MAX_INBOX_KEY_LENGTH = 1024;
/** The longest dedupe id or receipt id an inbox takes, in UTF-16 code units. */
export const MAX_INBOX_ID_LENGTH = 256;

/** An `INBOX_INPUT_INVALID` error: `what` was `value`, `expected` was expected. */
export function inboxInputError(what: string, value: unknown, expected: string, cause?: unknown): InboxError {
  return new InboxError({
    code: 'INBOX_INPUT_INVALID',
    message: `Invalid ${what} ${describeValue(value)}: expected ${expected}`,
    ...(cause !== undefined && { cause }),
  });
}

/** The `INBOX_CLOSED` error of the inbox named `name`. */
export function inboxClosedError(name: string): InboxError {
  return new InboxError({
    code: 'INBOX_CLOSED',
    message: `${name} is closed: create a new inbox to go on (close an inbox only when nothing uses it any more)`,
  });
}

/** The `LEASE_LOST` error for a call about `key`. */
export function leaseLostError(key: string, what: string): InboxError {
  return new InboxError({
    code: 'LEASE_LOST',
    message: `The lease on session ${JSON.stringify(key)} is lost: ${what}; another worker settles its entries`,
    sessionKey: key,
  });
}

/** The `LEASE_LOST` error of a call about an entry that is no longer in the inbox (another worker settled and acknowledged it). */
export function entrySettledError(receiptId: string): InboxError {
  return new InboxError({
    code: 'LEASE_LOST',
    message: `Entry ${JSON.stringify(receiptId)} is no longer in the inbox: it was settled and acknowledged (by another worker, if not by this one)`,
    receiptId,
  });
}

/** The `INBOX_FULL` error: `scope` says which limit was reached. */
export function inboxFullError(
  sessionKey: string,
  scope: 'session' | 'inbox',
  limit: number,
  retryAfterMs: number,
): InboxError {
  const where =
    scope === 'session'
      ? `session ${JSON.stringify(sessionKey)} has ${limit} entries waiting (maxPendingPerSession)`
      : `the inbox has ${limit} entries waiting (maxPending)`;
  return new InboxError({
    code: 'INBOX_FULL',
    message: `Inbox full: ${where}; nothing was written, retry after ${retryAfterMs} ms with the same id`,
    retryAfterMs,
    sessionKey,
  });
}

/** The `OUTCOME_EXPIRED` error for `receiptId`. */
export function outcomeExpiredError(receiptId: string): InboxError {
  return new InboxError({
    code: 'OUTCOME_EXPIRED',
    message: `No outcome for receipt ${JSON.stringify(receiptId)}: its entry is no longer in the inbox and its outcome is gone (kept outcomeTtlMs), or it was never accepted here`,
    receiptId,
  });
}

/** The `OUTCOME_TIMEOUT` error for `receiptId` after `timeoutMs`. */
export function outcomeTimeoutError(receiptId: string, timeoutMs: number): InboxError {
  return new InboxError({
    code: 'OUTCOME_TIMEOUT',
    message: `No outcome for receipt ${JSON.stringify(receiptId)} within ${timeoutMs} ms; the entry is still in the inbox and will be settled: wait again`,
    receiptId,
  });
}

/**
 * Checks a session key as an inbox keeps it: a non-empty string of well-formed Unicode without
 * NUL (a text column must hold it faithfully), at most {@link MAX_INBOX_KEY_LENGTH} code units.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function assertInboxKey(key: unknown, what = 'session key'): asserts key is string {
  const expected = `a non-empty string of well-formed Unicode without NUL, at most ${MAX_INBOX_KEY_LENGTH} code units`;
  if (typeof key !== 'string' || key === '' || key.length > MAX_INBOX_KEY_LENGTH || unstorableTextIndex(key) !== -1) {
    throw inboxInputError(what, key, expected);
  }
}

/**
 * Checks an id (a dedupe id, a receipt id, a worker id): a non-empty string of well-formed
 * Unicode without NUL, at most {@link MAX_INBOX_ID_LENGTH} code units.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function assertInboxId(id: unknown, what: string): asserts id is string {
  if (typeof id !== 'string' || id === '' || id.length > MAX_INBOX_ID_LENGTH || unstorableTextIndex(id) !== -1) {
    throw inboxInputError(
      what,
      id,
      `a non-empty string of well-formed Unicode without NUL, at most ${MAX_INBOX_ID_LENGTH} code units`,
    );
  }
}

/** An accepted entry's fields, checked, with its signal as the JSON text an inbox stores. */
export interface CheckedAccept {
  readonly sessionKey: string;
  readonly agentId: string | undefined;
  readonly kind: SignalKind;
  /** `JSON.stringify({ kind, payload })`. */
  readonly signalText: string;
  readonly id: string;
  readonly control: InboxEntry['control'];
}

const CONTROLS: ReadonlySet<unknown> = new Set(['rewind', 'delete', 'approve']);
const ACCEPT_KEYS: ReadonlySet<string> = new Set(['sessionKey', 'agentId', 'signal', 'id', 'control']);

/**
 * Checks `Inbox.accept`'s argument: every transport refuses the same inputs the same way.
 * @throws InboxError `INBOX_INPUT_INVALID` (nothing is written).
 */
export function checkAccept(entry: InboxAcceptEntry): CheckedAccept {
  if (!isRecord(entry)) {
    throw inboxInputError('inbox entry', entry, '{ sessionKey, agentId?, signal: { kind, payload }, id, control? }');
  }
  for (const key of Object.keys(entry)) {
    if (!ACCEPT_KEYS.has(key)) {
      throw inboxInputError('inbox entry field', key, 'only sessionKey, agentId, signal, id and control');
    }
  }
  const { sessionKey, agentId, signal, id, control } = entry;
  assertInboxKey(sessionKey);
  if (agentId !== undefined) assertInboxId(agentId, 'agent id');
  assertInboxId(id, 'dedupe id');
  if (control !== undefined && !CONTROLS.has(control)) {
    throw inboxInputError('control', control, '"rewind", "delete", "approve" or no control');
  }
  if (!isRecord(signal) || !isSignalKind(signal.kind)) {
    throw inboxInputError(
      'signal',
      signal,
      '{ kind: a signal kind (user_message, tool_result, tool_approval, stop, timer, custom:<name>), payload }',
    );
  }
  let payloadText: string;
  try {
    payloadText = serializeCheckpointData(signal.payload);
  } catch (error) {
    throw new InboxError({
      code: 'INBOX_INPUT_INVALID',
      message: `Invalid signal payload for session ${JSON.stringify(sessionKey)}: ${errorText(error)} (expected a payload meeting the checkpoint JSON rules)`,
      sessionKey,
      cause: error,
    });
  }
  return {
    sessionKey,
    agentId,
    kind: signal.kind,
    signalText: `{"kind":${JSON.stringify(signal.kind)},"payload":${payloadText}}`,
    id,
    control,
  };
}

/** The `{ kind, payload }` an inbox stored as text, parsed. */
export function parseSignalText(text: string): InboxEntry['signal'] {
  return JSON.parse(text) as InboxEntry['signal'];
}

/**
 * Checks a lease given back to an inbox.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function assertLease(lease: unknown): asserts lease is InboxLease {
  if (
    !isRecord(lease) ||
    typeof lease.key !== 'string' ||
    lease.key === '' ||
    typeof lease.token !== 'string' ||
    lease.token === '' ||
    typeof lease.workerId !== 'string'
  ) {
    throw inboxInputError('lease', lease, 'an InboxLease { key, workerId, token, expiresAt } from acquire()');
  }
}

/**
 * Checks an entry given back to an inbox (`beginDelivery`, `ack`).
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function assertEntry(entry: unknown): asserts entry is InboxEntry {
  if (
    !isRecord(entry) ||
    typeof entry.receiptId !== 'string' ||
    entry.receiptId === '' ||
    typeof entry.sessionKey !== 'string' ||
    !isInboxSeq(entry.seq)
  ) {
    throw inboxInputError('inbox entry', entry, 'an InboxEntry { receiptId, sessionKey, seq, … } from read()');
  }
}

/**
 * Checks `acquire`'s arguments.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function assertAcquire(workerId: unknown, opts: unknown): asserts opts is { leaseMs: number; max: number } {
  assertInboxId(workerId, 'worker id');
  if (!isRecord(opts)) throw inboxInputError('acquire options', opts, '{ leaseMs, max }');
  const { leaseMs, max } = opts;
  if (typeof leaseMs !== 'number' || !Number.isSafeInteger(leaseMs) || leaseMs < 1 || leaseMs > MAX_TIMEOUT_MS) {
    throw inboxInputError('leaseMs', leaseMs, `an integer number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 1) {
    throw inboxInputError('max', max, 'an integer >= 1');
  }
}

/**
 * Checks a `seq` argument (`read`'s `afterSeq`), when given.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function assertOptionalSeq(seq: unknown, what: string): asserts seq is string | undefined {
  if (seq !== undefined && !isInboxSeq(seq)) throw inboxInputError(what, seq, 'a decimal string such as "42"');
}

/**
 * Checks `putOutcome`'s TTL.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function assertTtl(ttlMs: unknown): asserts ttlMs is number {
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs < 1) {
    throw inboxInputError('ttlMs', ttlMs, 'an integer number of milliseconds >= 1');
  }
}

/**
 * Checks an outcome given to `putOutcome` and returns it as the JSON text an inbox stores.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function outcomeText(receiptId: string, outcome: unknown): string {
  if (!isRecord(outcome) || typeof outcome.status !== 'string') {
    throw inboxInputError('outcome', outcome, 'an OutcomeJson { sessionKey, agentId, status, … } (outcomeToJson)');
  }
  try {
    return serializeCheckpointData(outcome);
  } catch (error) {
    throw new InboxError({
      code: 'INBOX_INPUT_INVALID',
      message: `Invalid outcome for receipt ${JSON.stringify(receiptId)}: ${errorText(error)} (expected JSON: build it with outcomeToJson)`,
      receiptId,
      cause: error,
    });
  }
}

/** True when a stored outcome (as JSON text's parsed value) is a poisoned entry's. */
export function isPoisonedOutcome(outcome: unknown): boolean {
  return isRecord(outcome) && isRecord(outcome.error) && outcome.error.code === 'INBOX_POISONED';
}

/**
 * Checks a delivery attempt (`publish`).
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function assertAttempt(attempt: unknown): asserts attempt is number {
  if (typeof attempt !== 'number' || !Number.isSafeInteger(attempt) || attempt < 1) {
    throw inboxInputError('attempt', attempt, 'an integer >= 1 (the count beginDelivery returned)');
  }
}

/**
 * Checks a notice (`notify`).
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function assertNotice(what: unknown): asserts what is InboxNotice {
  if (what !== 'entry' && what !== 'stop') throw inboxInputError('notice', what, '"entry" or "stop"');
}

/**
 * Checks `outcome()`'s options and returns them.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function checkOutcomeOptions(opts: unknown): { abortSignal?: AbortSignal; timeoutMs?: number } {
  if (opts === undefined) return {};
  if (!isRecord(opts)) throw inboxInputError('outcome options', opts, '{ abortSignal?, timeoutMs? }');
  const { timeoutMs, abortSignal } = opts;
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0)) {
    throw inboxInputError('timeoutMs', timeoutMs, 'a number of milliseconds >= 0 (Infinity: no limit)');
  }
  if (abortSignal !== undefined && !(abortSignal instanceof AbortSignal)) {
    throw inboxInputError('abortSignal', abortSignal, 'an AbortSignal');
  }
  return opts;
}

/**
 * Checks `events()`'s arguments; returns the reference as one of its two shapes.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function checkEventsArgs(
  ref: unknown,
  opts: unknown,
): {
  readonly receiptId?: string;
  readonly sessionKey?: string;
  readonly from?: string;
  readonly abortSignal?: AbortSignal;
} {
  const expected = '{ receiptId } or { sessionKey }';
  if (!isRecord(ref)) throw inboxInputError('stream reference', ref, expected);
  const hasReceipt = ref.receiptId !== undefined;
  const hasKey = ref.sessionKey !== undefined;
  if (hasReceipt === hasKey) throw inboxInputError('stream reference', ref, expected);
  if (hasReceipt) assertInboxId(ref.receiptId, 'receipt id');
  else assertInboxKey(ref.sessionKey);
  if (opts !== undefined && !isRecord(opts)) throw inboxInputError('events options', opts, '{ from?, abortSignal? }');
  const from = opts?.from;
  const abortSignal = opts?.abortSignal;
  if (from !== undefined) {
    if (hasKey) throw inboxInputError('from', from, 'no offset with { sessionKey } (offsets belong to one receipt)');
    if (!isInboxSeq(from)) throw inboxInputError('from', from, 'an offset this inbox yielded');
  }
  if (abortSignal !== undefined && !(abortSignal instanceof AbortSignal)) {
    throw inboxInputError('abortSignal', abortSignal, 'an AbortSignal');
  }
  const r = ref as InboxStreamRef & { receiptId?: string; sessionKey?: string };
  return {
    ...(hasReceipt ? { receiptId: r.receiptId } : { sessionKey: r.sessionKey }),
    ...(from !== undefined && { from: from }),
    ...(abortSignal !== undefined && { abortSignal: abortSignal }),
  };
}

/**
 * Checks a `{ limit? }` option (`deadLetters`, `pending`) and returns the limit.
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function checkLimit(opts: unknown, fallback: number): number {
  if (opts === undefined) return fallback;
  if (!isRecord(opts)) throw inboxInputError('options', opts, '{ limit? }');
  const { limit } = opts;
  if (limit === undefined) return fallback;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
    throw inboxInputError('limit', limit, 'an integer >= 1');
  }
  return limit;
}

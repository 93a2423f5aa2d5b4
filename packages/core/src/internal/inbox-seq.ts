import { describeValue } from '../signal.js';
import { isRecord } from './values.js';

const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/** True for an inbox `seq` (or `inboxSeq`): a decimal string without sign or leading zeros. */
export function isInboxSeq(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 20 && DECIMAL.test(value);
}

/**
 * Compares two inbox `seq`s (decimal strings, as {@link isInboxSeq} accepts) by their numeric
 * value: negative when `a` comes first, 0 when equal, positive when `a` comes later. Exact for
 * any length (no conversion to a number).
 */
export function compareInboxSeq(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * What is wrong with a session checkpoint's inbox fields (`inboxSeq`, `inboxPartial`,
 * `inboxOutcomes`), or
 * `undefined` when they are absent or well-formed.
 */
export function inboxFieldsProblem(data: Readonly<Record<string, unknown>>): string | undefined {
  const { inboxSeq, inboxPartial, inboxOutcomes } = data;
  if (inboxSeq !== undefined && !isInboxSeq(inboxSeq)) {
    return `inboxSeq ${describeValue(inboxSeq)} is not an inbox seq (a decimal string such as "42")`;
  }
  if (inboxOutcomes !== undefined && !(Array.isArray(inboxOutcomes) && inboxOutcomes.every(isSettledOutcome))) {
    return `inboxOutcomes ${describeValue(inboxOutcomes)} is not a list of { receiptId: a non-empty string, seq: a decimal string, outcome: an object }`;
  }
  if (inboxPartial === undefined) return undefined;
  if (
    !isRecord(inboxPartial) ||
    !isInboxSeq(inboxPartial.seq) ||
    typeof inboxPartial.receiptId !== 'string' ||
    inboxPartial.receiptId === ''
  ) {
    return `inboxPartial ${describeValue(inboxPartial)} is not { seq: a decimal string, receiptId: a non-empty string }`;
  }
  return undefined;
}

/** True for one item of a checkpoint's `inboxOutcomes`. */
function isSettledOutcome(item: unknown): boolean {
  return (
    isRecord(item) &&
    typeof item.receiptId === 'string' &&
    item.receiptId !== '' &&
    isInboxSeq(item.seq) &&
    isRecord(item.outcome)
  );
}

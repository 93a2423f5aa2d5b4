import type { Clock } from '../clock.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { describeValue } from '../signal.js';

let lastMs = Number.NaN;
let lastIso = '';

/**
 * `ms` (milliseconds since the epoch) as an ISO 8601 string. Hot paths (a pipeline stage, a
 * checkpoint save) mostly ask within the same millisecond, so the last conversion is cached.
 */
export function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** The current time as an ISO 8601 string (the hot path pays for `Date.now()` only). */
export function isoNow(): string {
  return isoAt(Date.now());
}

/** The largest time a `Date` holds, in ms either side of the epoch. */
const MAX_DATE_MS = 8.64e15;

/** True for a {@link Clock}: an object (or function) with a `now()` method. */
export function isClock(value: unknown): value is Clock {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { now?: unknown }).now === 'function'
  );
}

/** What an option that must be a {@link Clock} says when it is not: `expected a Clock { now(): number }, got …`. */
export function clockProblem(value: unknown): string {
  return `expected a Clock { now(): number } (such as systemClock), got ${describeValue(value)}`;
}

/**
 * `clock.now()`, checked: milliseconds since the epoch within the range of a `Date`.
 * @throws InvalidArgumentError `CLOCK_INVALID` for anything else (`NaN`, a string, a time no
 * `Date` holds); what `now()` throws passes through.
 */
export function readClock(clock: Clock): number {
  const ms = clock.now();
  if (typeof ms === 'number' && ms >= -MAX_DATE_MS && ms <= MAX_DATE_MS) return ms; // NaN fails both
  throw new InvalidArgumentError({
    code: 'CLOCK_INVALID',
    message: `Invalid time ${describeValue(ms)} from clock.now(): expected milliseconds since the epoch, as Date.now() returns`,
  });
}

import type { ConfigProblem } from '../errors/config-error.js';
import { describeValue } from '../signal.js';
import { MAX_TIMEOUT_MS } from './timers.js';

/** The limits every inbox transport takes, as inbox.md gives their defaults. */
export interface InboxLimits {
  /** How many entries one session may have waiting (not yet acknowledged): 1,000. */
  readonly maxPendingPerSession: number;
  /** How many entries the inbox may have waiting: 100,000. */
  readonly maxPending: number;
  /** How long a dedupe id is remembered, in milliseconds: 10 minutes. */
  readonly dedupeWindowMs: number;
  /** The `retryAfterMs` of an `INBOX_FULL` error: 1,000 ms. */
  readonly retryAfterMs: number;
}

/** The defaults of {@link InboxLimits}. */
export const DEFAULT_INBOX_LIMITS: InboxLimits = Object.freeze({
  maxPendingPerSession: 1000,
  maxPending: 100_000,
  dedupeWindowMs: 10 * 60_000,
  retryAfterMs: 1000,
});

/** The option names {@link resolveInboxLimits} reads. */
export const INBOX_LIMIT_OPTIONS: readonly string[] = [
  'maxPendingPerSession',
  'maxPending',
  'dedupeWindowMs',
  'retryAfterMs',
];

/**
 * Reads the limits from a transport's options, with the defaults; each bad value adds a problem
 * (for the transport's `ConfigError`) and yields the default.
 */
export function resolveInboxLimits(options: Readonly<Record<string, unknown>>, problems: ConfigProblem[]): InboxLimits {
  const count = (name: keyof InboxLimits): number => {
    const value = options[name] ?? DEFAULT_INBOX_LIMITS[name];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
    problems.push({ path: name, message: `expected an integer >= 1, got ${describeValue(value)}` });
    return DEFAULT_INBOX_LIMITS[name];
  };
  const ms = (name: 'dedupeWindowMs' | 'retryAfterMs'): number => {
    const value = options[name] ?? DEFAULT_INBOX_LIMITS[name];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= MAX_TIMEOUT_MS) return value;
    problems.push({
      path: name,
      message: `expected an integer number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${describeValue(value)}`,
    });
    return DEFAULT_INBOX_LIMITS[name];
  };
  return {
    maxPendingPerSession: count('maxPendingPerSession'),
    maxPending: count('maxPending'),
    dedupeWindowMs: ms('dedupeWindowMs'),
    retryAfterMs: ms('retryAfterMs'),
  };
}

/** Adds a problem when `options[name]` is given and is not an integer number of milliseconds from 1 to {@link MAX_TIMEOUT_MS}. */
export function msOptionProblem(
  options: Readonly<Record<string, unknown>>,
  name: string,
  problems: ConfigProblem[],
): void {
  const value = options[name];
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_TIMEOUT_MS) {
    problems.push({
      path: name,
      message: `expected an integer number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${describeValue(value)}`,
    });
  }
}

/** Adds a problem for every key of `options` not in `known`. */
export function unknownOptionProblems(
  options: Readonly<Record<string, unknown>>,
  known: readonly string[],
  problems: ConfigProblem[],
): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      problems.push({ path: key, message: `unknown option ${JSON.stringify(key)} (known: ${known.join(', ')})` });
    }
  }
}

import { systemClock, type Clock } from './clock.js';
import { ConfigError, type ConfigProblem } from './errors/config-error.js';
import {
  INBOX_LIMIT_OPTIONS,
  resolveInboxLimits,
  unknownOptionProblems,
  type InboxLimits,
} from './internal/inbox-options.js';
import { clockProblem, isClock } from './internal/clock.js';
import { isRecord } from './internal/values.js';
import { describeValue } from './signal.js';

/**
 * Options of {@link MemoryInbox}. Unknown keys are refused (a typo must not pass silently), with
 * every other problem, in one `ConfigError`.
 *
 * @example
 * ```ts
 * let now = Date.parse('2026-01-01T00:00:00Z');
 * const inbox = new MemoryInbox({ maxPendingPerSession: 10, clock: { now: () => now } });
 * now += 31_000; // leases of 30 s have expired
 * ```
 */
export interface MemoryInboxOptions {
  /** How many entries one session may have waiting (not yet acknowledged) before `accept` refuses with `INBOX_FULL`. Default 1,000. */
  maxPendingPerSession?: number;
  /** How many entries the inbox may have waiting before `accept` refuses with `INBOX_FULL`. Default 100,000. */
  maxPending?: number;
  /** How long an accepted `id` is remembered (a retry returns the first receipt), in milliseconds. Default 600,000 (10 minutes). */
  dedupeWindowMs?: number;
  /** The `retryAfterMs` an `INBOX_FULL` error carries, in milliseconds. Default 1,000. */
  retryAfterMs?: number;
  /** Where the inbox reads the time: lease expiry, outcome and dedupe retention, `acceptedAt`. Default the system clock; tests pass their own to move time. */
  clock?: Clock;
}

/** Validated options. @internal */
export interface ResolvedMemoryInboxOptions extends InboxLimits {
  readonly clock: Clock;
}

const KNOWN = [...INBOX_LIMIT_OPTIONS, 'clock'];

/**
 * Validates {@link MemoryInboxOptions}, reporting every problem at once.
 * @throws ConfigError `CONFIG_INVALID`.
 * @internal
 */
export function resolveMemoryInboxOptions(options: MemoryInboxOptions | undefined): ResolvedMemoryInboxOptions {
  if (options === undefined) return { ...resolveInboxLimits({}, []), clock: systemClock };
  if (!isRecord(options)) {
    throw new ConfigError({
      problems: [
        { path: '', message: `expected inbox options { ${KNOWN.join('?, ')}? }, got ${describeValue(options)}` },
      ],
    });
  }
  const problems: ConfigProblem[] = [];
  const limits = resolveInboxLimits(options, problems);
  const clock: unknown = options.clock ?? systemClock;
  if (!isClock(clock)) problems.push({ path: 'clock', message: clockProblem(clock) });
  unknownOptionProblems(options, KNOWN, problems);
  if (problems.length > 0) throw new ConfigError({ problems });
  return { ...limits, clock: clock as Clock };
}

import {
  Action,
  ConfigError,
  SignalKind,
  describeValue,
  type Clock,
  type ConfigProblem,
  type Plugin,
  type SignalRoute,
} from '@signalyard/core';
import { clockProblem, isClock, readClock } from '@signalyard/core/internal';

/** Options of {@link rateLimitPlugin}. */
export interface RateLimitOptions {
  /** At most this many `user_message` signals per session key within any `windowMs`. */
  perSession: number;
  /** The sliding window, in milliseconds. */
  windowMs: number;
  /**
   * The clock arrivals are timed with. Default: the runner's (`createRunner({ clock })`, through
   * `PluginContext.clock`), else the system clock.
   */
  clock?: Clock;
  /** A clock function (`() => milliseconds`), the older form of `clock`; `clock` wins when both are given. */
  now?: () => number;
}

/**
 * A reference plugin: at most `perSession` user messages per session key in any sliding window
 * of `windowMs`. It counts every `user_message` signal a session receives (through
 * `PluginContext.on`) and contributes one **plugin-tier** route for `user_message` whose
 * predicate reads the count for `ctx.sessionKey`: over the limit → `Action.reject('rate_limited')`.
 *
 * Because unrouted user messages default to `continue`, the gate applies whenever the agent has
 * no user-message route of its own; an agent that routes user messages itself overrides it
 * (plugin routes are defaults). Memory holds the arrivals of the sessions active within the
 * last window or two: a session's counts are dropped once all of them have left the window.
 *
 * @throws ConfigError `CONFIG_INVALID` when `perSession` is not a positive integer, `windowMs` not a
 * positive number, or `clock`/`now` no clock.
 * @example
 * ```ts
 * createRunner({ agents, plugins: [rateLimitPlugin({ perSession: 5, windowMs: 60_000 })] });
 * ```
 */
export function rateLimitPlugin(options: RateLimitOptions): Plugin {
  const problems: ConfigProblem[] = [];
  if (typeof options !== 'object' || (options as unknown) === null) {
    throw new ConfigError({
      problems: [{ path: '', message: `expected { perSession, windowMs }, got ${describeValue(options)}` }],
    });
  }
  if (typeof options.perSession !== 'number' || !Number.isSafeInteger(options.perSession) || options.perSession < 1) {
    problems.push({
      path: 'perSession',
      message: `expected a positive integer, got ${describeValue(options.perSession)}`,
    });
  }
  if (typeof options.windowMs !== 'number' || !Number.isFinite(options.windowMs) || options.windowMs <= 0) {
    problems.push({
      path: 'windowMs',
      message: `expected a positive number of milliseconds, got ${describeValue(options.windowMs)}`,
    });
  }
  if (options.now !== undefined && typeof options.now !== 'function') {
    problems.push({ path: 'now', message: `expected a clock function, got ${describeValue(options.now)}` });
  }
  if (options.clock !== undefined && !isClock(options.clock)) {
    problems.push({ path: 'clock', message: clockProblem(options.clock) });
  }
  if (problems.length > 0) throw new ConfigError({ problems });
  const { perSession, windowMs } = options;
  const own = options.clock ?? (options.now === undefined ? undefined : { now: options.now });
  // The runner's clock replaces the system clock at setup, unless the options gave one.
  let clock: Clock = own ?? { now: Date.now };
  const now = (): number => readClock(clock);
  /** Arrival times per session key, oldest first. */
  const arrivals = new Map<string, number[]>();
  // Keys whose every arrival has left the window are dropped once per window (amortised O(1)
  // per message), so memory holds only the sessions active within the last window or two.
  let nextSweep = -Infinity;
  const sweep = (at: number): void => {
    if (at < nextSweep) return;
    nextSweep = at + windowMs;
    for (const [key, times] of arrivals) if ((times[times.length - 1] as number) <= at - windowMs) arrivals.delete(key);
  };

  const countInWindow = (sessionKey: string, at: number): number => {
    const times = arrivals.get(sessionKey);
    if (times === undefined) return 0;
    let n = 0;
    for (let i = times.length - 1; i >= 0 && (times[i] as number) > at - windowMs; i--) n++;
    return n;
  };

  const route: SignalRoute = {
    kind: SignalKind.UserMessage,
    name: 'rate-limit',
    // Pure: reads the counts the listener keeps; the current message is already counted.
    predicate: (_signal, ctx) => ctx.sessionKey !== undefined && countInWindow(ctx.sessionKey, now()) > perSession,
    action: Action.reject('rate_limited'),
  };

  return {
    name: 'rate-limit',
    signalRoutes: () => [route],
    setup(ctx) {
      if (own === undefined && ctx.clock !== undefined) clock = ctx.clock;
      ctx.on((event) => {
        if (event.type !== 'signal_received' || event.signal.kind !== SignalKind.UserMessage) return;
        const at = now();
        sweep(at);
        let times = arrivals.get(event.sessionKey);
        if (times === undefined) arrivals.set(event.sessionKey, (times = []));
        let drop = 0;
        while (drop < times.length && (times[drop] as number) <= at - windowMs) drop++;
        if (drop > 0) times.splice(0, drop);
        times.push(at);
      });
    },
    dispose() {
      arrivals.clear();
    },
  };
}

/**
 * Where Signalyard reads the time: `createRunner({ clock })`, `new Kernel({ clock })`, the
 * checkpoint stores and the inspector take one, and every timestamp they write (checkpoint
 * `savedAt`, causes, transcripts, events) comes from it. Tests and replays drive time with a
 * clock of their own instead of patching globals.
 *
 * @example
 * ```ts
 * let t = Date.parse('2026-01-01T00:00:00Z');
 * const clock: Clock = { now: () => t };
 * t += 60_000; // a minute later, for everything that reads this clock
 * ```
 */
export interface Clock {
  /** Milliseconds since the Unix epoch, like `Date.now()`. */
  now(): number;
}

/** The default {@link Clock}: `Date.now()`. */
export const systemClock: Clock = Object.freeze({ now: (): number => Date.now() });

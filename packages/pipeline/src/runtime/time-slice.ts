import { setImmediate as immediately } from 'node:timers';

/** How long a run works synchronously before it lets the event loop run, in ms of wall-clock time. */
const TIME_SLICE_MS = 4;

/** How many stages that awaited a promise a run takes before it lets the event loop run anyway. */
const AWAITED_STEPS_PER_SLICE = 1000;

/**
 * When a run lets the event loop run. Stages run back to back: synchronous ones never yield by
 * themselves, and async ones whose promises settle at once only give way to other microtasks.
 * Without yielding, a loop of stages would block timers, I/O and abort listeners, so
 * `abortSignal`, `timeoutMs` and quota deadlines could not stop it. A run yields after a stage
 * when either
 *
 * - it has worked for {@link TIME_SLICE_MS} since its slice started (a stage that awaited a
 *   promise starts a new slice: while it awaited, other work could run), or
 * - it has taken {@link AWAITED_STEPS_PER_SLICE} stages that awaited a promise since it last
 *   yielded (async stages that settle at once never let timers run).
 *
 * The slice runs on the system time (`Date.now()`): with the default clock that is the reading
 * each stage step makes anyway for its trace, so a check costs a subtraction ({@link sliceTime});
 * with a clock of the caller's (which a test may hold still) the slice reads the system time
 * itself: it schedules, it records nothing. The yield is a macrotask (`setImmediate` from `node:timers`, which fake timers,
 * patching the global one, leave alone: a test that fakes timers never has to advance them for
 * a run to go on).
 * @internal
 */
export class TimeSlice {
  #start: number;
  #awaited = 0;

  /** @param now `Date.now()` when the run starts working. */
  constructor(now = Date.now()) {
    this.#start = now;
  }

  /** After a stage step that ended at `now` (`Date.now()`): true when the run should yield now. */
  afterStep(now: number, awaited: boolean): boolean {
    if (awaited) {
      this.#start = now;
      return ++this.#awaited >= AWAITED_STEPS_PER_SLICE;
    }
    return this.due(now);
  }

  /** True when the run has worked synchronously for a slice; `now` is a recent `Date.now()`. */
  due(now: number): boolean {
    const elapsed = now - this.#start;
    if (elapsed >= TIME_SLICE_MS) return true;
    // a reading from before the slice started, or a clock set back: restart the slice
    if (elapsed < -TIME_SLICE_MS) this.#start = now;
    return false;
  }

  /** Starts a new slice at `now` (`Date.now()`): the run has just awaited something. */
  restart(now: number): void {
    this.#start = now;
  }

  /** Lets the event loop run, then starts a new slice. */
  async yield(): Promise<void> {
    await new Promise<void>((resolve) => {
      immediately(resolve);
    });
    this.#start = Date.now();
    this.#awaited = 0;
  }
}

/**
 * The time slice's reading for a step that ended at `clockMs` on the run's clock: that reading
 * itself when the run's clock is the system clock (no second read), else the system time.
 * @internal
 */
export function sliceTime(scope: { readonly systemTime: boolean }, clockMs: number): number {
  return scope.systemTime ? clockMs : Date.now();
}

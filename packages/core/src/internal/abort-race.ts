import { abortedError, onAbort } from './abort.js';

/**
 * The one promise-versus-abort race of the Signalyard packages.
 *
 * {@link untilAborted} races one promise; {@link AbortRace} races many promises against the same
 * signal with a single `abort` listener for all of them (a run makes model call after model call
 * on one signal, and adding and removing a listener on a Node `AbortSignal` per call costs more
 * than the call itself with a fast model). Either way the result settles like the promise, or
 * rejects with the signal's `AbortedError` ({@link abortedError}) as soon as the signal fires
 * (at once when it already has) — also when the work behind the promise ignores the signal: it
 * is abandoned, and its late rejection is handled, so it never becomes an unhandled rejection.
 * A rejection of the promise passes through unchanged.
 */
export class AbortRace {
  readonly #signal: AbortSignal;
  /** The rejections of the promises being raced. */
  readonly #pending = new Set<(error: unknown) => void>();
  readonly #onAbort = (): void => {
    const error = abortedError(this.#signal);
    for (const reject of this.#pending) reject(error);
    this.#pending.clear();
  };
  /** Stops listening to the signal; undefined once stopped (or when it had fired already). */
  #unlisten: (() => void) | undefined;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    this.#unlisten = signal.aborted ? undefined : onAbort(signal, this.#onAbort);
  }

  /** Settles like `value`, or rejects with the signal's `AbortedError` as soon as it fires. */
  race<T>(value: PromiseLike<T> | T): Promise<T> {
    const signal = this.#signal;
    if (signal.aborted) return abandoned(value, signal);
    const pending = this.#pending;
    return new Promise<T>((resolve, reject) => {
      pending.add(reject);
      settleInto(value, resolve, reject, () => pending.delete(reject));
    });
  }

  /**
   * `race(value).then(onValue, onError)` in one step: settles like `onValue(v)` once `value`
   * fulfils with `v`, like `onError(e)` once it rejects with `e` or — as soon as the signal fires —
   * with the signal's `AbortedError`. `onValue` is never called after the signal fired. One
   * promise fewer per call than the two steps (a model call is awaited on every handoff, and with
   * an AsyncLocalStorage active every promise costs a hook). A throw from either callback rejects
   * the result.
   */
  raceThen<T, U>(value: PromiseLike<T> | T, onValue: (value: T) => U, onError: (error: unknown) => U): Promise<U> {
    const signal = this.#signal;
    if (signal.aborted) return abandoned(value, signal).then(onValue, onError);
    const pending = this.#pending;
    return new Promise<U>((resolve, reject) => {
      const abort = (error: unknown): void => {
        settleWith(onError, error, resolve, reject);
      };
      pending.add(abort);
      Promise.resolve(value).then(
        (v) => {
          if (pending.delete(abort)) settleWith(onValue, v, resolve, reject);
        },
        (error: unknown) => {
          if (pending.delete(abort)) settleWith(onError, error, resolve, reject);
        },
      );
    });
  }

  /**
   * Calls `callback` once when the signal fires (unless it has already: check that first),
   * through the race's one listener — as cheap as a `Set` entry, where a listener of its own
   * on a Node `AbortSignal` costs far more. Returns a function that stops watching (idempotent).
   */
  watch(callback: () => void): () => void {
    const pending = this.#pending;
    const entry = (): void => {
      callback();
    };
    pending.add(entry); // its own entry: watching one callback twice needs two
    return () => {
      pending.delete(entry);
    };
  }

  /** Stops listening (idempotent); call it when the work the signal guards is over. */
  dispose(): void {
    this.#unlisten?.();
    this.#unlisten = undefined;
  }
}

/**
 * Settles like `value`, or rejects with an `AbortedError` as soon as `abortSignal` fires (see
 * {@link AbortRace}; this is its one-promise form, with a listener of its own that is removed
 * when `value` settles). Without a signal it is `Promise.resolve(value)`.
 */
export function untilAborted<T>(value: T | PromiseLike<T>, abortSignal: AbortSignal | undefined): Promise<T> {
  if (abortSignal === undefined) return Promise.resolve(value);
  if (abortSignal.aborted) return abandoned(value, abortSignal);
  return new Promise<T>((resolve, reject) => {
    const stopListening = onAbort(abortSignal, () => {
      reject(abortedError(abortSignal));
    });
    settleInto(value, resolve, reject, stopListening);
  });
}

/** The race's answer when the signal had already fired: `value` is abandoned (its rejection handled). */
function abandoned<T>(value: T | PromiseLike<T>, signal: AbortSignal): Promise<T> {
  Promise.resolve(value).then(undefined, ignore);
  return Promise.reject(abortedError(signal));
}

/** Settles `resolve`/`reject` like `value`, calling `done` first (the race no longer listens for it). */
function settleInto<T>(
  value: T | PromiseLike<T>,
  resolve: (value: T) => void,
  reject: (error: unknown) => void,
  done: () => void,
): void {
  Promise.resolve(value).then(
    (v) => {
      done();
      resolve(v);
    },
    (error: unknown) => {
      done();
      reject(error);
    },
  );
}

/** Resolves with `callback(input)`, or rejects with what it throws. */
function settleWith<I, U>(
  callback: (input: I) => U,
  input: I,
  resolve: (value: U) => void,
  reject: (error: unknown) => void,
): void {
  try {
    resolve(callback(input));
  } catch (error) {
    reject(error);
  }
}

function ignore(): void {
  // an abandoned promise's outcome no longer matters
}

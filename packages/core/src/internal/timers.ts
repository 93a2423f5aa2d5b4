import { abortedError, onAbort } from './abort.js';

/** The longest delay `setTimeout` honours (2^31 − 1 ms, about 24.8 days); longer ones fire at once. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** `ms` clamped to what `setTimeout` honours: at least 0, at most {@link MAX_TIMEOUT_MS}; `Infinity` means {@link MAX_TIMEOUT_MS}. */
export function clampTimeout(ms: number): number {
  if (Number.isNaN(ms) || ms <= 0) return 0;
  return ms > MAX_TIMEOUT_MS ? MAX_TIMEOUT_MS : ms;
}

/** A deadline: `signal` fires with `reason()` after `ms`; `clear()` cancels it. */
export interface Deadline {
  readonly signal: AbortSignal;
  clear(): void;
}

/**
 * An `AbortSignal` that fires after `ms` (clamped with {@link clampTimeout}), built on
 * `setTimeout` + `AbortController` so fake timers drive it (they do not fake
 * `AbortSignal.timeout`). `Infinity` never fires.
 */
export function deadline(ms: number, reason: () => unknown): Deadline {
  const controller = new AbortController();
  if (ms === Infinity) return { signal: controller.signal, clear: noop };
  const timer = setTimeout(() => {
    controller.abort(reason());
  }, clampTimeout(ms));
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
    },
  };
}

function noop(): void {
  // nothing to cancel
}

/** True for a delay `setTimeout` honours: a finite number of ms above 0, up to {@link MAX_TIMEOUT_MS}. */
export function isTimerDelay(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_TIMEOUT_MS;
}

/**
 * Calls `callback` after `ms` (`setTimeout`, so fake timers drive it). Returns a function that
 * cancels it (idempotent). With `unref`, the timer never keeps the process alive.
 */
export function startTimer(ms: number, callback: () => void, options: { unref?: boolean } = {}): () => void {
  const timer = setTimeout(callback, clampTimeout(ms));
  if (options.unref === true) (timer as { unref?: () => void }).unref?.();
  return () => {
    clearTimeout(timer);
  };
}

/**
 * Resolves after `ms` (clamped with {@link clampTimeout}; `setTimeout`, so fake timers drive it),
 * or rejects with the signal's `AbortedError` as soon as `abortSignal` fires (at once when it
 * already has), clearing the timer. With `unref`, the timer never keeps the process alive.
 */
export function sleep(ms: number, abortSignal?: AbortSignal, options: { unref?: boolean } = {}): Promise<void> {
  if (abortSignal?.aborted === true) return Promise.reject(abortedError(abortSignal));
  return new Promise<void>((resolve, reject) => {
    let stopListening = noop;
    const cancel = startTimer(
      ms,
      () => {
        stopListening();
        resolve();
      },
      options,
    );
    if (abortSignal !== undefined) {
      stopListening = onAbort(abortSignal, () => {
        cancel();
        reject(abortedError(abortSignal));
      });
    }
  });
}

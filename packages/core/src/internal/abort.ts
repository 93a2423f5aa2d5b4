import { AbortedError } from '../errors/aborted-error.js';

/** True when `value` looks like an `AbortSignal` (also one from another realm or a polyfill). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { aborted?: unknown }).aborted === 'boolean' &&
    typeof (value as { addEventListener?: unknown }).addEventListener === 'function' &&
    typeof (value as { removeEventListener?: unknown }).removeEventListener === 'function'
  );
}

/**
 * One signal that fires when any of `signals` fires, with that signal's reason (`AbortSignal.any`);
 * `undefined` entries are skipped. With none left it returns `undefined`; with one, that signal.
 */
export function linkAbortSignals(...signals: readonly (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

/** The `AbortedError` for an aborted signal: its reason when that already is one, else a new one with the reason as `cause`. */
export function abortedError(abortSignal: AbortSignal, message?: string): AbortedError {
  const reason: unknown = abortSignal.reason;
  if (AbortedError.isInstance(reason)) return reason;
  return new AbortedError({ cause: reason, ...(message === undefined ? {} : { message }) });
}

/** Throws {@link abortedError} when `abortSignal` has fired. */
export function throwIfAborted(abortSignal: AbortSignal | undefined): void {
  if (abortSignal?.aborted === true) throw abortedError(abortSignal);
}

/**
 * Settles like `value`, or rejects with an `AbortedError` as soon as `abortSignal` fires — also
 * when the work behind `value` ignores the signal (it is abandoned; its late rejection is
 * handled, so it never becomes an unhandled rejection). A rejection of `value` passes through
 * unchanged.
 */
export function untilAborted<T>(value: T | PromiseLike<T>, abortSignal: AbortSignal | undefined): Promise<T> {
  if (abortSignal === undefined) return Promise.resolve(value);
  if (abortSignal.aborted) {
    Promise.resolve(value).catch(ignore);
    return Promise.reject(abortedError(abortSignal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(abortedError(abortSignal));
    };
    abortSignal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(value).then(
      (v) => {
        abortSignal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (error: unknown) => {
        abortSignal.removeEventListener('abort', onAbort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the work's own rejection, unchanged
        reject(error);
      },
    );
  });
}

function ignore(): void {
  // an abandoned promise's outcome no longer matters
}

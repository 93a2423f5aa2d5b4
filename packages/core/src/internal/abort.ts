import { AbortedError } from '../errors/aborted-error.js';

/** True when `value` looks like an `AbortSignal` (also one from another realm or a polyfill). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== 'object' || value === null) return false;
  // The common case, without reading `aborted` through its brand-checking getter on every call.
  if (value instanceof AbortSignal) return true;
  try {
    const s = value as Partial<Record<'aborted' | 'addEventListener' | 'removeEventListener', unknown>>;
    return (
      typeof s.aborted === 'boolean' &&
      typeof s.addEventListener === 'function' &&
      typeof s.removeEventListener === 'function'
    );
  } catch {
    return false; // a hostile Proxy is not a signal
  }
}

/**
 * Aborts `target` when `source` aborts (at once when it already has), with its reason. Returns a
 * function that unlinks them (idempotent): call it when the work `target` guards is over, so a
 * long-lived `source` does not keep the link.
 */
export function linkAbort(target: AbortController, source: AbortSignal | undefined): () => void {
  if (source === undefined || target.signal.aborted) return noop;
  if (source.aborted) {
    target.abort(source.reason);
    return noop;
  }
  return onAbort(source, () => {
    target.abort(source.reason);
  });
}

/** Calls `callback` once when `signal` aborts; returns a function that stops listening (idempotent). */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  signal.addEventListener('abort', callback, { once: true });
  let listening = true;
  return () => {
    if (!listening) return;
    listening = false;
    signal.removeEventListener('abort', callback);
  };
}

function noop(): void {
  // nothing was linked
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

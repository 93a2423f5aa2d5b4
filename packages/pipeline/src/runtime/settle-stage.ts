import { onAbort } from '@signalyard/core/internal';

/** How a stage's promise settled, or that the signal fired first. @internal */
export type Settled =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown }
  | { readonly ok: 'aborted' };

const ABORTED: Settled = Object.freeze({ ok: 'aborted' });

/**
 * True for a value with a `then` method (what a stage returns when it is async). Never throws:
 * a value whose `then` cannot be read (a throwing getter, a hostile proxy) is not a thenable.
 * @internal
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  try {
    return typeof (value as { then?: unknown }).then === 'function';
  } catch {
    return false;
  }
}

/**
 * Waits for the stage's promise, or for `signal` to fire, whichever comes first. Never rejects:
 * a `then` that throws is the stage's error.
 * @internal
 */
export function settle(promise: PromiseLike<unknown>, signal: AbortSignal): Promise<Settled> {
  return new Promise<Settled>((resolve) => {
    let stopListening = noop;
    if (signal.aborted) resolve(ABORTED);
    else
      stopListening = onAbort(signal, () => {
        resolve(ABORTED);
      });
    const done = (outcome: Settled): void => {
      stopListening();
      resolve(outcome);
    };
    try {
      promise.then(
        (value) => {
          done({ ok: true, value });
        },
        (error: unknown) => {
          done({ ok: false, error });
        },
      );
    } catch (error) {
      done({ ok: false, error });
    }
  });
}

function noop(): void {
  // the signal had fired: nothing to stop listening to
}

import { AbortedError } from '@signalyard/core';

/**
 * Settles like `promise`, or rejects with `AbortedError` as soon as `abortSignal` fires. A
 * promise left behind by an abort has its rejection handled, so a provider that fails late
 * raises no unhandled rejection.
 * @internal
 */
export function untilAborted<T>(promise: Promise<T>, abortSignal: AbortSignal | undefined): Promise<T> {
  if (abortSignal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => undefined);
      reject(new AbortedError({ cause: abortSignal.reason }));
    };
    abortSignal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        abortSignal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        abortSignal.removeEventListener('abort', onAbort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes the provider's rejection on unchanged
        reject(error);
      },
    );
  });
}

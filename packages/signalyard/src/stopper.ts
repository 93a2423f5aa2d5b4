/**
 * A lazily created AbortController: what stops one signal's work (force_stop, the caller's
 * abortSignal, a close() timeout). The AbortSignal is only made when something reads `signal`
 * (an engine that honours aborts, a lock, a custom action handler), so a turn whose engine never
 * looks costs no AbortController. `onAbort` listeners fire either way. @internal
 */
export class Stopper {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #listeners: (() => void)[] | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }

  /** Calls `listener` once when aborted (at once if already aborted); returns a remover. */
  onAbort(listener: () => void): () => void {
    if (this.#aborted) {
      listener();
      return noop;
    }
    (this.#listeners ??= []).push(listener);
    return () => {
      const list = this.#listeners;
      if (list === undefined) return;
      const i = list.indexOf(listener);
      if (i >= 0) list.splice(i, 1);
    };
  }
}

const noop = (): void => undefined;

/**
 * Settles like `promise`, or rejects with `abortError()` as soon as `stopper` aborts (the
 * promise's own later outcome is then ignored).
 */
export function raceStop<T>(promise: Promise<T>, stopper: Stopper, abortError: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const off = stopper.onAbort(() => {
      reject(abortError());
    });
    promise.then(
      (value) => {
        off();
        resolve(value);
      },
      (error: unknown) => {
        off();
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the engine's own rejection, passed through unchanged
        reject(error);
      },
    );
  });
}

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
  /** Races to reject on abort ({@link raceStop}): reject, error factory, reject, error factory... */
  #races: (((error: Error) => void) | (() => Error))[] | undefined;
  /** What the session queue's fast lane waiting on this stopper's engine turn does on abort (one at a time). */
  #onStop: (() => void) | undefined;

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
    const races = this.#races;
    this.#races = undefined;
    if (races !== undefined) {
      for (let i = 0; i < races.length; i += 2) (races[i] as (error: Error) => void)((races[i + 1] as () => Error)());
    }
    const onStop = this.#onStop;
    this.#onStop = undefined;
    onStop?.();
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }

  /**
   * Calls `reject(abortError())` when this stopper aborts (at once if it has). Never removed: a
   * race whose promise settled first ignores the late rejection. Cheaper than a listener and its
   * remover per race, since a stopper serves a few races at most — one signal's turn and its custom
   * actions, or one batch's turns — and lives no longer than they do (until then it keeps each
   * settled race's promise, and so its value, reachable).
   */
  rejectOnAbort(reject: (error: Error) => void, abortError: () => Error): void {
    if (this.#aborted) reject(abortError());
    else if (this.#races === undefined)
      this.#races = [reject, abortError]; // made at its size: most stoppers serve one race
    else this.#races.push(reject, abortError);
  }

  /**
   * Sets (or with `undefined`, clears) the one function called when this stopper aborts while
   * it is set — the session queue's fast lane, waiting on the turn's engine with no race promise.
   * Not called when already aborted: the caller looks at `aborted` first.
   */
  setOnStop(onStop: (() => void) | undefined): void {
    this.#onStop = onStop;
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
  // One shared executor (no closure, no context made per race): it hands its functions over here.
  const race = new Promise<T>(captureSettlers);
  const resolve = capturedResolve as (value: T) => void;
  const reject = capturedReject as (error: Error) => void;
  capturedResolve = capturedReject = undefined;
  stopper.rejectOnAbort(reject, abortError);
  promise.then(resolve, reject);
  return race;
}

let capturedResolve: ((value: never) => void) | undefined;
let capturedReject: ((error: Error) => void) | undefined;
const captureSettlers = (resolve: (value: never) => void, reject: (error: Error) => void): void => {
  capturedResolve = resolve;
  capturedReject = reject;
};

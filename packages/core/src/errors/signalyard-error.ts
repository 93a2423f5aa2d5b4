const marker = Symbol.for('signalyard.error.SignalyardError');

/** Options accepted by the {@link SignalyardError} constructor; `C` is the class's union of codes. */
export interface SignalyardErrorOptions<C extends string = string> {
  /** Stable, SCREAMING_SNAKE machine-readable code, e.g. `FSM_INVALID_TRANSITION`. */
  readonly code: C;
  /** Human-readable message naming the offending value and what was expected. */
  readonly message: string;
  /** The underlying error, when this one wraps another. */
  readonly cause?: unknown;
}

/**
 * The base class of every error Signalyard throws.
 *
 * Every error carries a stable string {@link SignalyardError.code} that programs can switch on;
 * messages are for people and may change between releases. Each subclass owns a typed union of
 * its codes (`C`), so `switch (error.code)` over a `RunnerError` is checked by the compiler;
 * `docs/errors.md` lists every code with its class, its cause and what to do. Use {@link SignalyardError.isInstance}
 * (or {@link isSignalyardError}) rather than `instanceof`: it checks a `Symbol.for` marker and so
 * still works when two copies of `@signalyard/core` are installed.
 *
 * @example
 * ```ts
 * try {
 *   await store.save(key, data, 3);
 * } catch (error) {
 *   if (isSignalyardError(error, 'CHECKPOINT_CONFLICT')) reload();
 *   else throw error;
 * }
 * ```
 */
export class SignalyardError<C extends string = string> extends Error {
  private readonly [marker] = true;
  /** Stable machine-readable code (SCREAMING_SNAKE), unchanged across releases. */
  readonly code: C;

  constructor(options: SignalyardErrorOptions<C>) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
  }

  /** True when `error` is a `SignalyardError` (of any subclass), from any installed copy of core. */
  static isInstance(error: unknown): error is SignalyardError {
    return hasErrorMarker(error, marker);
  }
}

/**
 * True when `error` carries the `Symbol.for` marker `symbol`. For error classes in other
 * packages: each subclass of {@link SignalyardError} declares its own marker and implements its
 * own `static isInstance` with this function (an inherited `isInstance` would match every error).
 * Total: a revoked or hostile `Proxy` reads as unmarked, never throws.
 *
 * @example
 * ```ts
 * type MyErrorCode = 'MY_THING_FAILED';
 * const marker = Symbol.for('signalyard.error.MyError');
 * class MyError extends SignalyardError<MyErrorCode> {
 *   private readonly [marker] = true;
 *   static override isInstance(e: unknown): e is MyError { return hasErrorMarker(e, marker); }
 * }
 * ```
 */
export function hasErrorMarker(error: unknown, symbol: symbol): boolean {
  if (typeof error !== 'object' || error === null) return false;
  try {
    return symbol in error && (error as Record<symbol, unknown>)[symbol] === true;
  } catch {
    return false; // a revoked or hostile Proxy is no Signalyard error
  }
}

/**
 * True when `error` is a {@link SignalyardError}; with `code`, only when its code is that code.
 *
 * @example
 * ```ts
 * if (isSignalyardError(outcome.error, 'ABORTED')) console.log('stopped by the caller');
 * ```
 */
export function isSignalyardError(error: unknown, code?: string): error is SignalyardError {
  return SignalyardError.isInstance(error) && (code === undefined || error.code === code);
}

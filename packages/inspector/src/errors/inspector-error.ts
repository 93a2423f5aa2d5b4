import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.InspectorError');

/** The codes of {@link InspectorError}. */
export type InspectorErrorCode =
  /** `startInspector` was given options it cannot use: neither a `runner` nor a `store`, a runner without `on` / `listSessions` / `session` / `history` / `sessionAt`, a store without `load` / `list`, a `replayReport` that is not a non-empty path, a port outside 0–65535, an empty `host` or `token`, a token with characters other than letters, digits, `-` and `_`, an `allowedHosts` that is not a list of non-empty strings, a `by` that is not a non-empty string, `diagrams` that are not Mermaid texts by agent id, a `timelineLimit`, `maxEventStreams` or `maxEventStreamBytes` that is not a whole number of 1 or more, a `clock` without a `now()` method, or an `abortSignal` that is not an `AbortSignal`. Nothing was started. Fix: pass the options as the message describes. */
  | 'INSPECTOR_OPTIONS_INVALID'
  /** The inspector's HTTP server could not listen: the port is taken (`EADDRINUSE`), the host is not an address of this machine, or listening is not allowed. Nothing is left running. Fix: pass another `port` (0 picks a free one) or `host`. */
  | 'INSPECTOR_LISTEN_FAILED';

/**
 * `startInspector` could not start (codes {@link InspectorErrorCode}). The message names the bad
 * option and what was expected, or the address that could not be used; nothing is left running.
 *
 * @example
 * ```ts
 * try {
 *   await startInspector({ runner, port: 4319 });
 * } catch (error) {
 *   if (InspectorError.isInstance(error) && error.code === 'INSPECTOR_LISTEN_FAILED') {
 *     await startInspector({ runner, port: 0 }); // any free port
 *   }
 * }
 * ```
 */
export class InspectorError extends SignalyardError<InspectorErrorCode> {
  private readonly [marker] = true;

  constructor(options: { code: InspectorErrorCode; message: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, cause: options.cause });
  }

  /** True when `error` is an `InspectorError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is InspectorError {
    return hasErrorMarker(error, marker);
  }
}

import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.SessionKeyError');

/** The code of {@link SessionKeyError}. */
export type SessionKeyErrorCode =
  /** A session key could not be built, formatted or parsed: a `SessionKey` factory got an empty id, an agent id with no valid character, a bad channel or an unknown task type; `formatSessionKey` got a malformed key object; `parseSessionKey` got text it could not have formatted (a bad escape, a ninth subagent level, over 1,024 characters); `RouteResolver.resolve` got an inbound message it cannot key; or `normalizeAgentId` got something that is not a string. Ids containing a NUL character (U+0000) or a lone surrogate are refused everywhere: no checkpoint store or session lock can hold their key. `problem` says what, `input` holds the value. Fix: pass ids as the message describes; parse only keys that `formatSessionKey` produced. */
  'SESSION_KEY_INVALID';

/**
 * A session key could not be built, formatted or parsed (code `SESSION_KEY_INVALID`).
 *
 * Thrown by the `SessionKey` factories for arguments they cannot turn into a valid key (an
 * empty id, an agent id with no valid character, a bad channel, an unknown task type such as
 * `'dm'`, a key over 1,024 characters, a ninth level of subagent nesting), by
 * `formatSessionKey` for a malformed key object, by `parseSessionKey` for any string it could
 * not have formatted, and by `RouteResolver.resolve` for an inbound message it cannot key.
 * The message names the problem and the offending value.
 *
 * @example
 * ```ts
 * try { parseSessionKey(text) } catch (e) {
 *   if (SessionKeyError.isInstance(e)) console.error(e.problem, e.input);
 * }
 * ```
 */
export class SessionKeyError extends SignalyardError<SessionKeyErrorCode> {
  private readonly [marker] = true;
  /** What is wrong, without the offending value (e.g. `empty segment 2 (agent id)`). */
  readonly problem: string;
  /** The offending input (the text given to `parseSessionKey`, or the bad argument), when there is one. */
  readonly input?: unknown;

  constructor(options: { problem: string; message: string; input?: unknown; cause?: unknown }) {
    super({ code: 'SESSION_KEY_INVALID', message: options.message, cause: options.cause });
    this.problem = options.problem;
    if (options.input !== undefined) this.input = options.input;
  }

  /** True when `error` is a `SessionKeyError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is SessionKeyError {
    return hasErrorMarker(error, marker);
  }
}

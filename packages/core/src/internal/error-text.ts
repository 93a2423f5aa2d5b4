import { describeValue } from '../signal.js';

/**
 * The message of `error` for a log line or a wrapping error's message: `error.message` for an
 * `Error` (or any object with a string `message`), else a short description of the value.
 * Total: it never throws, whatever it is given — a getter that throws, a revoked or hostile
 * `Proxy` — so it is safe inside `catch` blocks that must not fail themselves.
 */
export function errorText(error: unknown): string {
  try {
    if (typeof error === 'object' && error !== null) {
      const message: unknown = (error as { message?: unknown }).message;
      if (typeof message === 'string') return message;
    }
    return describeValue(error);
  } catch {
    return unreadable(error);
  }
}

/**
 * `error.code` when it is a string, else `undefined`. Total, like {@link errorText}: a throwing
 * getter or a hostile `Proxy` reads as `undefined`.
 */
export function errorCode(error: unknown): string | undefined {
  try {
    if (typeof error !== 'object' || error === null) return undefined;
    const code: unknown = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

function unreadable(error: unknown): string {
  try {
    return `an unreadable ${typeof error} (reading it threw)`;
  } catch {
    return 'an unreadable value (reading it threw)';
  }
}

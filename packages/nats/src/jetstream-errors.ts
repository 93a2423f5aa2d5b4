import { InboxError, isSignalyardError } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';

/** The `INBOX_UNAVAILABLE` error of a failed call to the server (nothing written, for `accept`). @internal */
export function unavailable(what: string, error: unknown): Error {
  if (isSignalyardError(error)) return error;
  return new InboxError({
    code: 'INBOX_UNAVAILABLE',
    message: `NATS JetStream could not ${what}: ${errorText(error)}; retry later (check the server and the connection settings)`,
    cause: error,
  });
}

/** The `INBOX_OUTCOME_UNKNOWN` error of an `accept` whose acknowledgement was lost. @internal */
export function outcomeUnknown(sessionKey: string, error: unknown): InboxError {
  return new InboxError({
    code: 'INBOX_OUTCOME_UNKNOWN',
    message: `The stream's acknowledgement of an entry for session ${JSON.stringify(sessionKey)} was lost (${errorText(error)}): the entry may exist; retry accept with the same id within dedupeWindowMs`,
    sessionKey,
    cause: error,
  });
}

/** The `INBOX_CONFIG_INVALID` error of a stream, consumer or bucket whose settings contradict the inbox's. @internal */
export function configMismatch(where: string, setting: string, found: unknown, wanted: unknown): InboxError {
  return new InboxError({
    code: 'INBOX_CONFIG_INVALID',
    message: `${where} exists with ${setting} ${JSON.stringify(found)}, but this inbox is configured with ${setting} ${JSON.stringify(wanted)}: give the inbox the setting the stream was provisioned with, or provision another stream`,
  });
}

/** Whether a client error is the API's "not found" for `code` (10014 consumer, 10037 message, 10043 sequence, 10059 stream). @internal */
export function isApiCode(error: unknown, ...codes: number[]): boolean {
  const apiCode = (error as { code?: unknown; api_error?: { err_code?: unknown } } | null)?.code;
  const errCode = (error as { api_error?: { err_code?: unknown } } | null)?.api_error?.err_code;
  return codes.some((code) => apiCode === code || errCode === code);
}

/** Whether a client error says the request timed out (the server may have acted). @internal */
export function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  const message = error instanceof Error ? error.message : '';
  return name === 'TimeoutError' || /timeout|timed out/i.test(message);
}

import { InboxError, type InboxEntry } from '@signalyard/core';
import { errorText, parseSignalText } from '@signalyard/core/internal';
import { SqliteStoreError } from './errors/sqlite-store-error.js';

/** An entry row, as the statements read it. */
export interface EntryRow {
  readonly receipt_id: string;
  readonly session_key: string;
  readonly seq: string;
  readonly agent_id: string | null;
  readonly signal: string;
  readonly control: InboxEntry['control'] | null;
  readonly accepted_at: string;
  readonly attempts: number;
}

/** The entry a row holds. */
export function entryOf(row: EntryRow): InboxEntry {
  return {
    receiptId: row.receipt_id,
    sessionKey: row.session_key,
    seq: row.seq,
    acceptedAt: row.accepted_at,
    ...(row.agent_id !== null && { agentId: row.agent_id }),
    signal: parseSignalText(row.signal),
    attempts: row.attempts,
    ...(row.control !== null && { control: row.control }),
  };
}

/** SQLite's error code (`SQLITE_BUSY`, …) of a libsql error, if it has one. */
function sqliteCodeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** `INBOX_UNAVAILABLE` for a failed call: nothing was written. */
export function unavailable(what: string, error: unknown): InboxError {
  const code = sqliteCodeOf(error);
  return new InboxError({
    code: 'INBOX_UNAVAILABLE',
    message: `${what}: ${errorText(error)}${code === undefined ? '' : ` (${code})`}`,
    cause: error,
  });
}

/** `SQLITE_OPEN_FAILED` for a file the inbox cannot open. */
export function openFailed(path: string, error: unknown): SqliteStoreError {
  const sqliteCode = sqliteCodeOf(error);
  return new SqliteStoreError({
    code: 'SQLITE_OPEN_FAILED',
    path,
    message: `Cannot open inbox database ${JSON.stringify(path)}: ${errorText(error)}`,
    ...(sqliteCode !== undefined && { sqliteCode }),
    cause: error,
  });
}

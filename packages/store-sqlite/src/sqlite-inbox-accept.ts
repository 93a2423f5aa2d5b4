import type { InboxEntry, InboxReceipt } from '@signalyard/core';
import { randomUUID } from 'node:crypto';
import { isoAt, parseSignalText, type CheckedAccept } from '@signalyard/core/internal';
import type { ResolvedSqliteInboxOptions } from './sqlite-inbox-options.js';
import type { InboxStatements } from './sqlite-inbox-statements.js';
import { PROCESS_ORIGIN } from './sqlite-inbox-watch.js';

/**
 * What one accept wrote: the receipt of the dedupe id's earlier accept (nothing written), a fresh
 * receipt (`fresh`), or the limit it hit (`'session'`, `'inbox'`: nothing written). @internal
 */
export type AcceptWritten = InboxReceipt | (InboxReceipt & { readonly fresh: true }) | 'session' | 'inbox';

/**
 * The statements of `SqliteInbox.accept`, run inside one write (one transaction of the group
 * commit, under SQLite's write lock): the dedupe id remembered for `dedupeWindowMs` with the
 * `seq` about to be allocated, unless a live one is there (then its receipt is returned, nothing
 * written); the entry inserted with the session key's next `seq`, in one statement with the
 * pending limits checked (a limit hit forgets the dedupe id again): the schema's trigger raises
 * the key's and the inbox's pending counts and sets the key's `last_seq` and waiting mark.
 * @internal
 */
export function acceptStatements(
  s: InboxStatements,
  input: CheckedAccept,
  now: number,
  limits: Pick<ResolvedSqliteInboxOptions, 'maxPendingPerSession' | 'maxPending' | 'dedupeWindowMs'>,
): AcceptWritten {
  const { sessionKey, id } = input;
  const receiptId = randomUUID(); // inbox.md: a receipt id is a UUID v4 (or the transport's own id)
  const acceptedAt = isoAt(now);
  const remembered = s.remember.run({
    id,
    receiptId,
    key: sessionKey,
    acceptedAt,
    expires: now + limits.dedupeWindowMs,
    now,
  });
  if (remembered.changes !== 1) return seenReceipt(s, id, now);
  const inserted = s.insertEntry.get({
    receiptId,
    key: sessionKey,
    agentId: input.agentId ?? null,
    kind: input.kind,
    signal: input.signalText,
    control: input.control ?? null,
    acceptedAt,
    origin: PROCESS_ORIGIN,
    maxSession: limits.maxPendingPerSession,
    maxPending: limits.maxPending,
  }) as [seq: string] | undefined;
  if (inserted === undefined) {
    s.forget.run(id);
    const pending = (s.keyPending.get(sessionKey) as { pending: number } | undefined)?.pending ?? 0;
    return pending >= limits.maxPendingPerSession ? 'session' : 'inbox';
  }
  const [seq] = inserted;
  return { receiptId, sessionKey, seq, acceptedAt, fresh: true };
}

/** The receipt of the live dedupe id `id`'s accept. */
function seenReceipt(s: InboxStatements, id: string, now: number): InboxReceipt {
  const seen = s.seen.get(id, now) as { receipt_id: string; session_key: string; seq: string; accepted_at: string };
  return { receiptId: seen.receipt_id, sessionKey: seen.session_key, seq: seen.seq, acceptedAt: seen.accepted_at };
}

/** The entry an accept of `input` inserted, as a read of it gives it (for the connection's `OwnEntries`). @internal */
export function acceptedEntry(input: CheckedAccept, receipt: InboxReceipt): InboxEntry {
  return {
    receiptId: receipt.receiptId,
    sessionKey: receipt.sessionKey,
    seq: receipt.seq,
    acceptedAt: receipt.acceptedAt,
    ...(input.agentId !== undefined && { agentId: input.agentId }),
    signal: parseSignalText(input.signalText),
    attempts: 0,
    ...(input.control !== undefined && { control: input.control }),
  };
}

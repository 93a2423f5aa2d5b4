import type { InboxReceipt } from '@signalyard/core';
import { isoAt, timeOrderedUuid, type CheckedAccept } from '@signalyard/core/internal';
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
 * commit, under SQLite's write lock): the dedupe id looked up; the session key's next `seq`
 * allocated in one statement with the pending limits checked and the key's pending count and
 * waiting mark set; the entry inserted, the dedupe id remembered for `dedupeWindowMs` and the
 * inbox's pending count raised.
 * @internal
 */
export function acceptStatements(
  s: InboxStatements,
  input: CheckedAccept,
  now: number,
  limits: Pick<ResolvedSqliteInboxOptions, 'maxPendingPerSession' | 'maxPending' | 'dedupeWindowMs'>,
): AcceptWritten {
  const { sessionKey } = input;
  const seen = s.seen.get(input.id, now) as
    { receipt_id: string; session_key: string; seq: string; accepted_at: string } | undefined;
  if (seen !== undefined) {
    return {
      receiptId: seen.receipt_id,
      sessionKey: seen.session_key,
      seq: seen.seq,
      acceptedAt: seen.accepted_at,
    };
  }
  const next = s.nextSeq.get({
    key: sessionKey,
    maxSession: limits.maxPendingPerSession,
    maxPending: limits.maxPending,
  }) as { seq: string } | undefined;
  if (next === undefined) {
    const pending = (s.keyPending.get(sessionKey) as { pending: number } | undefined)?.pending ?? 0;
    return pending >= limits.maxPendingPerSession ? 'session' : 'inbox';
  }
  const { seq } = next;
  const receipt: InboxReceipt = { receiptId: timeOrderedUuid(now), sessionKey, seq, acceptedAt: isoAt(now) };
  s.insertEntry.run({
    receiptId: receipt.receiptId,
    key: sessionKey,
    seq,
    agentId: input.agentId ?? null,
    kind: input.kind,
    signal: input.signalText,
    control: input.control ?? null,
    acceptedAt: receipt.acceptedAt,
    origin: PROCESS_ORIGIN,
  });
  s.remember.run({
    id: input.id,
    receiptId: receipt.receiptId,
    key: sessionKey,
    seq,
    acceptedAt: receipt.acceptedAt,
    expires: now + limits.dedupeWindowMs,
  });
  s.addPending.run(1);
  return { ...receipt, fresh: true };
}

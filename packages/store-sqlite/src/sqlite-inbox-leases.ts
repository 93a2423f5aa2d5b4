import type { InboxLease } from '@signalyard/core';
import { isoAt } from '@signalyard/core/internal';
import type { InboxStatements } from './sqlite-inbox-statements.js';
import { PROCESS_ORIGIN } from './sqlite-inbox-watch.js';

// The statements of the lease calls, each run inside one write (one transaction of the group
// commit). Leases live in `inbox_keys`, judged by this machine's clock.

/**
 * `SqliteInbox.acquire`: up to `max` free keys (with entries waiting, no live lease) leased to
 * the worker until `now + leaseMs`.
 * @internal
 */
export function acquireStatements(
  s: InboxStatements,
  workerId: string,
  now: number,
  opts: { leaseMs: number; max: number },
): InboxLease[] {
  const expires = now + opts.leaseMs;
  const keys = s.freeKeys.all({ now, max: opts.max }) as { key: string }[];
  return keys.map(({ key }) => {
    const { lease_token: token } = s.lease.get({ worker: workerId, expires, leaseMs: opts.leaseMs, key }) as {
      lease_token: string;
    };
    return { key, workerId, token, expiresAt: isoAt(expires) };
  });
}

/**
 * `SqliteInbox.release`: a lease still held gives its key up (a live one first undoes the
 * deliveries it began), and a notice tells workers when entries wait. `true`: entries wait.
 * @internal
 */
export function releaseStatements(s: InboxStatements, lease: InboxLease, now: number): boolean {
  const held = s.leaseOf.get(lease.key, lease.token) as { lease_expires: number; pending: number } | undefined;
  if (held === undefined) return false;
  if (held.lease_expires > now) s.undoDeliveries.run(lease.key, lease.token);
  s.unlease.run(lease.key, lease.token);
  if (held.pending > 0) s.notice.run(lease.key, 'entry', now, PROCESS_ORIGIN);
  return held.pending > 0;
}

/**
 * `SqliteInbox.beginDelivery`: the entry's delivery counted under the lease it was read under,
 * giving its `attempts`; else `'settled'` (the entry is gone) or `'lost'` (the lease is).
 * @internal
 */
export function beginDeliveryStatements(
  s: InboxStatements,
  receiptId: string,
  token: string | null,
  now: number,
): number | 'settled' | 'lost' {
  const row = s.beginDelivery.get({ token, receiptId, now }) as [attempts: number] | undefined;
  if (row !== undefined) return row[0];
  return s.entryExists.get(receiptId) === undefined ? 'settled' : 'lost';
}

import type { InboxEntry, InboxLease } from '../inbox.js';
import type { OutcomeJson } from '../outcome-json.js';
import {
  assertInboxId,
  assertInboxKey,
  assertLease,
  assertOptionalSeq,
  checkLimit,
  checkOutcomeOptions,
  leaseLostError,
} from './inbox-input.js';
import { waitForOutcome, type OutcomeLookup } from './inbox-streams.js';
import type { InboxWakeups } from './inbox-wakeups.js';

/**
 * `Inbox.outcome` on any transport: checks that the inbox is open (`open` throws when not) and
 * the arguments, then {@link waitForOutcome}; a synchronous failure becomes the rejection.
 */
export function inboxOutcome(
  open: () => void,
  receiptId: string,
  opts: unknown,
  lookup: (receiptId: string) => Promise<OutcomeLookup> | OutcomeLookup,
  wakeups: InboxWakeups,
): Promise<OutcomeJson> {
  try {
    open();
    assertInboxId(receiptId, 'receipt id');
    return waitForOutcome(receiptId, checkOutcomeOptions(opts), lookup, wakeups);
  } catch (error) {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown value passes through unchanged
    return Promise.reject(error);
  }
}

/**
 * `Inbox.read` on any transport: checks the lease and `afterSeq`, then reads `page(after)` — the
 * lease's key's entries after the `seq` `after`, or `undefined` when the lease is no longer held —
 * until a page is empty, remembering under which lease each entry was read (`readUnder`, for
 * `beginDelivery`'s check). `open` throws when the inbox is closed.
 */
export async function* readLeased(
  open: () => void,
  lease: InboxLease,
  afterSeq: string | undefined,
  page: (after: string) => Promise<readonly InboxEntry[] | undefined> | readonly InboxEntry[] | undefined,
  readUnder: WeakMap<InboxEntry, string>,
): AsyncGenerator<InboxEntry, void, undefined> {
  open();
  assertLease(lease);
  assertOptionalSeq(afterSeq, 'afterSeq');
  let last = afterSeq ?? '0';
  for (;;) {
    open();
    const entries = await page(last);
    if (entries === undefined)
      throw leaseLostError(lease.key, 'it expired or was taken over before the entries were read');
    if (entries.length === 0) return;
    for (const entry of entries) {
      last = entry.seq;
      readUnder.set(entry, lease.token);
      yield entry;
    }
  }
}

/**
 * `InspectableInbox.pending`'s options, checked: the session to list (all when `undefined`) and
 * how many entries at most (default 1,000).
 * @throws InboxError `INBOX_INPUT_INVALID`.
 */
export function checkPendingOptions(opts: unknown): {
  readonly sessionKey: string | undefined;
  readonly limit: number;
} {
  const given = opts as { sessionKey?: unknown; limit?: unknown } | undefined;
  const limit = checkLimit(given === undefined ? undefined : { limit: given.limit }, 1000);
  const sessionKey = given?.sessionKey;
  if (sessionKey !== undefined) assertInboxKey(sessionKey);
  return { sessionKey: sessionKey, limit };
}

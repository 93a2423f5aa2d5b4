import type { Inbox, InboxDeadLetter, InboxEntry, InboxLeaseInfo, InspectableInbox } from '@signalyard/core';
import { HttpProblem } from './http-util.js';

/**
 * What the inspector reads of a durable inbox: the entries waiting, the leases held
 * (`InspectableInbox`) and the dead letters. `SqliteInbox`, `PostgresInbox`, `JetStreamInbox` and
 * `MemoryInbox` are all of it.
 */
export type InspectorInbox = InspectableInbox & Pick<Inbox, 'deadLetters'>;

/** At most this many entries of one session are listed. */
const SESSION_ENTRIES = 200;
/** At most this many entries are counted per session in the overview, and this many dead letters listed. */
const OVERVIEW_LIMIT = 1000;

/** An entry as the page shows it (no payload beyond what a row needs). */
function entryView(e: InboxEntry): Record<string, unknown> {
  return {
    receiptId: e.receiptId,
    sessionKey: e.sessionKey,
    seq: e.seq,
    acceptedAt: e.acceptedAt,
    kind: e.control ?? e.signal.kind,
    ...(e.signal.kind === 'user_message' && typeof (e.signal.payload as { text?: unknown } | null)?.text === 'string'
      ? { text: (e.signal.payload as { text: string }).text.slice(0, 200) }
      : {}),
    attempts: e.attempts,
  };
}

/**
 * `GET /api/inbox?key=`: one session's entries waiting to be settled (seq order, at most 200)
 * and the lease holding the session (`null` when no worker holds it).
 */
export async function sessionInbox(inbox: InspectorInbox | undefined, key: string): Promise<unknown> {
  const i = present(inbox);
  const [entries, leases] = await Promise.all([i.pending({ sessionKey: key, limit: SESSION_ENTRIES }), i.leases()]);
  return { entries: entries.map(entryView), lease: leases.find((l) => l.key === key) ?? null };
}

/**
 * `GET /api/inbox/overview`: the sessions with entries waiting (how many, counted up to 1,000
 * entries in all), every live lease, and the dead letters (oldest first, at most 1,000).
 */
export async function inboxOverview(inbox: InspectorInbox | undefined): Promise<unknown> {
  const i = present(inbox);
  const [entries, leases] = await Promise.all([i.pending({ limit: OVERVIEW_LIMIT }), i.leases()]);
  const dead: InboxDeadLetter[] = [];
  for await (const letter of i.deadLetters({ limit: OVERVIEW_LIMIT })) dead.push(letter);
  const waiting = new Map<string, number>();
  for (const e of entries) waiting.set(e.sessionKey, (waiting.get(e.sessionKey) ?? 0) + 1);
  return {
    pending: [...waiting].map(([sessionKey, count]) => ({ sessionKey, count })),
    leases: leases satisfies readonly InboxLeaseInfo[],
    dead: dead.map(({ entry, outcome }) => ({
      entry: entryView(entry),
      error: outcome.error === undefined ? null : { code: outcome.error.code, message: outcome.error.message },
    })),
  };
}

function present(inbox: InspectorInbox | undefined): InspectorInbox {
  if (inbox === undefined) {
    throw new HttpProblem(
      404,
      'no_inbox',
      'this inspector shows no inbox: its runner has no durable inbox with pending(), leases() and deadLetters(), and no inbox option was given (startInspector({ inbox }))',
    );
  }
  return inbox;
}

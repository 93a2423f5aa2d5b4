import type { InboxEntry } from '@signalyard/core';
import { parseSignalText } from '@signalyard/core/internal';
import { inboxBatchSql } from './postgres-inbox-batch-statements.js';
import { iso, settledShard, type InboxNames } from './postgres-inbox-names.js';

/** The columns an entry is read with, in this order (see `entryOf`); `seq` as text under another name, so ORDER BY seq still orders numbers. */
const ENTRY = `receipt_id, session_key, seq::text AS seq_text, agent_id, signal, control, ${iso('accepted_at')}, attempts`;

/** A duration in milliseconds (a bigint parameter) as an interval. */
const ms = (param: string): string => `${param}::bigint * interval '1 millisecond'`;

/** The SQL of one inbox's statements, built once per inbox; each is one statement (one transaction, one snapshot). @internal */
export type InboxSql = ReturnType<typeof workerSql> & ReturnType<typeof readerSql> & ReturnType<typeof inboxBatchSql>;

/** Builds the statements of the inbox named by `n`. @internal */
export function inboxSql(n: InboxNames): InboxSql {
  return { ...workerSql(n), ...readerSql(n), ...inboxBatchSql(n) };
}

/** The statements of producers and workers: accept, leases, deliveries, acknowledgements, outcomes, events. */
function workerSql(n: InboxNames) {
  return {
    /** `id, receipt, key, agent, kind, signal, control, maxPer, max, windowMs` → `[status, receiptId, key, seq, acceptedAt]`. */
    accept: `SELECT * FROM ${n.accept.sql}($1, $2, $3, $4, $5, $6, $7, $8::integer, $9::bigint, $10::bigint)`,
    /** `worker, leaseMs, max` → `[key, token, expiresAt]` for each key leased. */
    acquire:
      `UPDATE ${n.keys.sql} k SET lease_worker = $1, lease_token = md5(random()::text || clock_timestamp()::text || k.key), ` +
      `lease_expires = clock_timestamp() + ${ms('$2')}, lease_ms = $2 ` +
      `FROM (SELECT key FROM ${n.keys.sql} WHERE waiting_since IS NOT NULL AND (lease_token IS NULL OR lease_expires <= clock_timestamp()) ` +
      `ORDER BY waiting_since, key LIMIT $3 FOR UPDATE SKIP LOCKED) c WHERE k.key = c.key ` +
      `RETURNING k.key, k.lease_token, ${iso('k.lease_expires')}`,
    /** `key, token` → a row when renewed. */
    renew:
      `UPDATE ${n.keys.sql} SET lease_expires = clock_timestamp() + lease_ms * interval '1 millisecond' ` +
      `WHERE key = $1 AND lease_token = $2 AND lease_expires > clock_timestamp() RETURNING 1`,
    /** `key, token` → `[pending]` when given up: uncounts its unfinished deliveries while it was live. */
    release:
      `WITH held AS (SELECT key, lease_expires > clock_timestamp() AS live, pending FROM ${n.keys.sql} ` +
      `WHERE key = $1 AND lease_token = $2 FOR UPDATE), ` +
      `undone AS (UPDATE ${n.entries.sql} SET attempts = attempts - 1, delivery_token = NULL ` +
      `WHERE session_key = $1 AND delivery_token = $2 AND EXISTS (SELECT 1 FROM held WHERE live)), ` +
      `freed AS (UPDATE ${n.keys.sql} k SET lease_worker = NULL, lease_token = NULL, lease_expires = NULL, lease_ms = NULL ` +
      `FROM held WHERE k.key = held.key RETURNING held.pending) ` +
      `SELECT pending FROM freed`,
    /** `key, token, afterSeq, limit` → `[live, …entry columns]`: one row with nulls when no entry. */
    read:
      `SELECT (SELECT k.lease_token = $2 AND k.lease_expires > clock_timestamp() FROM ${n.keys.sql} k WHERE k.key = $1), ` +
      `e.* FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT ${ENTRY} FROM ${n.entries.sql} ` +
      `WHERE session_key = $1 AND seq > $3::bigint ORDER BY seq LIMIT $4) e ON true`,
    /**
     * `keys[], tokens[], afterSeqs[], limits[]` → `[index (1-based), live, …entry columns]`: `read`
     * for several leases in one statement (one snapshot); one row with nulls for a lease without entries.
     */
    readMany:
      `SELECT r.i::integer, (SELECT k.lease_token = r.token AND k.lease_expires > clock_timestamp() FROM ${n.keys.sql} k WHERE k.key = r.key), ` +
      `e.* FROM unnest($1::text[], $2::text[], $3::bigint[], $4::integer[]) WITH ORDINALITY AS r(key, token, after, lim, i) ` +
      `LEFT JOIN LATERAL (SELECT ${ENTRY} FROM ${n.entries.sql} ` +
      `WHERE session_key = r.key AND seq > r.after ORDER BY seq LIMIT r.lim) e ON true`,
    /** `receiptId, token (null: not checked)` → `[attempts]` when counted. */
    beginDelivery:
      `UPDATE ${n.entries.sql} e SET attempts = attempts + 1, delivery_token = $2 WHERE receipt_id = $1 ` +
      `AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM ${n.keys.sql} k WHERE k.key = e.session_key ` +
      `AND k.lease_token = $2 AND k.lease_expires > clock_timestamp())) RETURNING attempts`,
    /** `receiptId` → a row when the entry is in the inbox. */
    entryExists: `SELECT 1 FROM ${n.entries.sql} WHERE receipt_id = $1`,
    /**
     * `receiptId` → `[no outcome kept]` when removed: drops its events when it has no outcome.
     * Commits without waiting for its WAL flush (`synchronous_commit` off for its transaction
     * alone): the checkpoint save settled the entry, and the outcome was stored (durably) before,
     * so an ack lost with a database crash is only a redelivery, recognised by its `seq` and
     * acknowledged without being applied. (A later commit's flush covers it anyway: WAL is a log.)
     */
    ack:
      `WITH gone AS (DELETE FROM ${n.entries.sql} WHERE receipt_id = $1 RETURNING session_key), ` +
      `k AS (UPDATE ${n.keys.sql} SET pending = pending - 1, ` +
      `waiting_since = CASE WHEN pending = 1 THEN NULL ELSE waiting_since END WHERE key IN (SELECT session_key FROM gone) RETURNING key), ` +
      // The counter row after the key's row (it reads k's rows), as the settles lock them; a
      // settled row (schema 3), never one an accept waits for.
      `c AS (UPDATE ${n.counters.sql} SET pending = pending - 1 ` +
      `WHERE shard IN (SELECT ${settledShard('key')} FROM k)), ` +
      `kept AS (SELECT 1 FROM ${n.outcomes.sql} WHERE receipt_id = $1 AND expires_at > clock_timestamp()), ` +
      `dropped AS (DELETE FROM ${n.events.sql} WHERE receipt_id = $1 AND EXISTS (SELECT 1 FROM gone) ` +
      `AND NOT EXISTS (SELECT 1 FROM kept)) ` +
      `SELECT NOT EXISTS (SELECT 1 FROM kept), set_config('synchronous_commit', 'off', true) FROM gone`,
    /** `receiptId, outcome, ttlMs, poisoned` → a row when stored (unless a live one is there); keeps a dead letter. */
    putOutcome:
      `WITH put AS (INSERT INTO ${n.outcomes.sql} AS o (receipt_id, outcome, expires_at) ` +
      `VALUES ($1, $2, clock_timestamp() + ${ms('$3')}) ON CONFLICT (receipt_id) DO UPDATE ` +
      `SET outcome = excluded.outcome, expires_at = excluded.expires_at WHERE o.expires_at <= clock_timestamp() ` +
      `RETURNING o.expires_at), ` +
      `dead AS (INSERT INTO ${n.dead.sql} AS d (receipt_id, put_order, session_key, seq, agent_id, signal, control, accepted_at, attempts, expires_at) ` +
      `SELECT e.receipt_id, nextval('${n.order.sql}'), e.session_key, e.seq, e.agent_id, e.signal, e.control, e.accepted_at, e.attempts, put.expires_at ` +
      `FROM ${n.entries.sql} e, put WHERE e.receipt_id = $1 AND $4::boolean ` +
      `ON CONFLICT (receipt_id) DO UPDATE SET put_order = excluded.put_order, session_key = excluded.session_key, seq = excluded.seq, ` +
      `agent_id = excluded.agent_id, signal = excluded.signal, control = excluded.control, accepted_at = excluded.accepted_at, ` +
      `attempts = excluded.attempts, expires_at = excluded.expires_at) ` +
      `SELECT 1 FROM put`,
    /**
     * `receiptId, outcome, ttlMs, poisoned, attempt, events[]` → `[outcome stored, entry removed, events added]`:
     * `publishMany` + `putOutcome` + `ack` in one statement (one transaction, one round trip). The
     * entry's row is locked first (a late publisher's offsets come before or after, never between);
     * its events are kept with the outcome.
     */
    settle:
      `WITH e AS (SELECT receipt_id, session_key, seq, agent_id, signal, control, accepted_at, attempts, next_event ` +
      `FROM ${n.entries.sql} WHERE receipt_id = $1 FOR UPDATE), ` +
      `added AS (INSERT INTO ${n.events.sql} (receipt_id, event_offset, attempt, event) ` +
      `SELECT $1, e.next_event + t.ord, $5, t.ev FROM e, unnest($6::text[]) WITH ORDINALITY AS t(ev, ord) RETURNING 1), ` +
      `put AS (INSERT INTO ${n.outcomes.sql} AS o (receipt_id, outcome, expires_at) ` +
      `VALUES ($1, $2, clock_timestamp() + ${ms('$3')}) ON CONFLICT (receipt_id) DO UPDATE ` +
      `SET outcome = excluded.outcome, expires_at = excluded.expires_at WHERE o.expires_at <= clock_timestamp() ` +
      `RETURNING o.expires_at), ` +
      `dead AS (INSERT INTO ${n.dead.sql} AS d (receipt_id, put_order, session_key, seq, agent_id, signal, control, accepted_at, attempts, expires_at) ` +
      `SELECT e.receipt_id, nextval('${n.order.sql}'), e.session_key, e.seq, e.agent_id, e.signal, e.control, e.accepted_at, e.attempts, put.expires_at ` +
      `FROM e, put WHERE $4::boolean ` +
      `ON CONFLICT (receipt_id) DO UPDATE SET put_order = excluded.put_order, session_key = excluded.session_key, seq = excluded.seq, ` +
      `agent_id = excluded.agent_id, signal = excluded.signal, control = excluded.control, accepted_at = excluded.accepted_at, ` +
      `attempts = excluded.attempts, expires_at = excluded.expires_at), ` +
      `gone AS (DELETE FROM ${n.entries.sql} WHERE receipt_id = $1 AND EXISTS (SELECT 1 FROM e) RETURNING session_key), ` +
      `k AS (UPDATE ${n.keys.sql} SET pending = pending - 1, ` +
      `waiting_since = CASE WHEN pending = 1 THEN NULL ELSE waiting_since END WHERE key IN (SELECT session_key FROM gone) RETURNING key), ` +
      `c AS (UPDATE ${n.counters.sql} SET pending = pending - 1 ` +
      `WHERE shard IN (SELECT ${settledShard('key')} FROM k)) ` +
      `SELECT EXISTS (SELECT 1 FROM put), EXISTS (SELECT 1 FROM gone), (SELECT count(*) FROM added)::integer`,
  } as const;
}

/** The statements that read: outcomes, stream logs, notices, operators' lists, housekeeping. */
function readerSql(n: InboxNames) {
  return {
    /** `receiptId` → `[outcome text or null, entry in the inbox]`. */
    lookup:
      `SELECT (SELECT outcome FROM ${n.outcomes.sql} WHERE receipt_id = $1 AND expires_at > clock_timestamp()), ` +
      `EXISTS (SELECT 1 FROM ${n.entries.sql} WHERE receipt_id = $1)`,
    /**
     * `receiptId, attempt, event` → `[1]` when appended, `[0]` when the entry is gone (the entry's
     * row lock orders offsets in commit order). Its notice (`v` + receipt id) is sent by its own
     * commit: one round trip, one commit (see `InboxDb.append` for why that is safe to do here).
     */
    publish:
      `WITH next AS (UPDATE ${n.entries.sql} SET next_event = next_event + 1 WHERE receipt_id = $1 RETURNING next_event), ` +
      `added AS (INSERT INTO ${n.events.sql} (receipt_id, event_offset, attempt, event) ` +
      `SELECT $1, next_event, $2, $3 FROM next RETURNING 1), ` +
      `note AS (SELECT pg_notify('${n.channel}', 'v' || $1) FROM (SELECT 1 FROM added LIMIT 1) a) ` +
      `SELECT count(*)::integer FROM note`,
    /** `receiptId, attempt, events[]` → as `publish` (in order, offsets after the log's last; one notice). */
    publishMany:
      `WITH next AS (UPDATE ${n.entries.sql} SET next_event = next_event + cardinality($3::text[]) WHERE receipt_id = $1 RETURNING next_event), ` +
      `added AS (INSERT INTO ${n.events.sql} (receipt_id, event_offset, attempt, event) ` +
      `SELECT $1, next.next_event - cardinality($3::text[]) + t.ord, $2, t.ev FROM next, unnest($3::text[]) WITH ORDINALITY AS t(ev, ord) RETURNING 1), ` +
      `note AS (SELECT pg_notify('${n.channel}', 'v' || $1) FROM (SELECT 1 FROM added LIMIT 1) a) ` +
      `SELECT count(*)::integer FROM note`,
    /** `receiptId, afterOffset, limit` → `[live, offset, attempt, event]`: one row with nulls when no event. */
    events:
      `SELECT EXISTS (SELECT 1 FROM ${n.entries.sql} WHERE receipt_id = $1), v.event_offset::text, v.attempt, v.event ` +
      `FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT event_offset, attempt, event FROM ${n.events.sql} ` +
      `WHERE receipt_id = $1 AND event_offset > $2::bigint ORDER BY event_offset LIMIT $3) v ON true`,
    /** `sessionKey` → `[receiptId]` of its latest in-flight receipt. */
    inFlight: `SELECT receipt_id FROM ${n.entries.sql} WHERE session_key = $1 AND next_event > 0 ORDER BY seq DESC LIMIT 1`,
    /** `limit (null: all)` → dead letters with their outcome, oldest first. */
    deadLetters:
      `SELECT d.receipt_id, d.session_key, d.seq::text, d.agent_id, d.signal, d.control, ${iso('d.accepted_at')}, d.attempts, o.outcome ` +
      `FROM ${n.dead.sql} d JOIN ${n.outcomes.sql} o ON o.receipt_id = d.receipt_id ` +
      `WHERE d.expires_at > clock_timestamp() AND o.expires_at > clock_timestamp() ORDER BY d.put_order LIMIT $1`,
    /** `limit` → every session's entries. */
    pendingAll: `SELECT ${ENTRY} FROM ${n.entries.sql} ORDER BY session_key, seq LIMIT $1`,
    /** `sessionKey, limit` → one session's entries. */
    pendingOf: `SELECT ${ENTRY} FROM ${n.entries.sql} WHERE session_key = $1 ORDER BY seq LIMIT $2`,
    /** → `[key, worker, expiresAt]` of the live leases. */
    leases:
      `SELECT key, lease_worker, ${iso('lease_expires')} FROM ${n.keys.sql} ` +
      `WHERE lease_token IS NOT NULL AND lease_expires > clock_timestamp() ORDER BY key`,
    /** → `[key, has a stop]` of every session with entries (a wake-up after notices may have been missed). */
    waitingKeys: `SELECT session_key, bool_or(kind = 'stop') FROM ${n.entries.sql} GROUP BY session_key ORDER BY session_key LIMIT 10000`,
    /** Drops expired dedupe ids, outcomes (with the events of settled entries) and dead letters. */
    sweep:
      `WITH d AS (DELETE FROM ${n.dedupe.sql} WHERE expires_at <= clock_timestamp()), ` +
      `o AS (DELETE FROM ${n.outcomes.sql} WHERE expires_at <= clock_timestamp() RETURNING receipt_id), ` +
      `v AS (DELETE FROM ${n.events.sql} ev WHERE ev.receipt_id IN (SELECT receipt_id FROM o) ` +
      `AND NOT EXISTS (SELECT 1 FROM ${n.entries.sql} e WHERE e.receipt_id = ev.receipt_id)), ` +
      `x AS (DELETE FROM ${n.dead.sql} WHERE expires_at <= clock_timestamp()) ` +
      `SELECT 1`,
  } as const;
}

/** An entry from its columns as {@link ENTRY} lists them. @internal */
export function entryOf(row: readonly unknown[]): InboxEntry {
  const [receiptId, sessionKey, seq, agentId, signal, control, acceptedAt, attempts] = row;
  return {
    receiptId: receiptId as string,
    sessionKey: sessionKey as string,
    seq: seq as string,
    acceptedAt: acceptedAt as string,
    ...(agentId !== null && { agentId: agentId as string }),
    signal: parseSignalText(signal as string),
    attempts: attempts as number,
    ...(control !== null && { control: control as InboxEntry['control'] }),
  };
}

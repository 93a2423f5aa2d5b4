import { settledShard, type InboxNames } from './postgres-inbox-names.js';

/** A duration in milliseconds (a bigint expression) as an interval. */
const ms = (expr: string): string => `${expr}::bigint * interval '1 millisecond'`;

/**
 * The statements that serve several worker calls of one kind at once (`InboxBatcher`): each is
 * the single call's statement over arrays, one transaction for the lot. Rows they lock in more
 * than one place are locked in one order (entries by receipt id, keys by key, counter shards by
 * shard), so two batches never wait for each other in a circle; like the single statements, a
 * key's row is locked before its counter shard's, as `accept` locks them. Rows are found by their
 * key's index (`= ANY (array)`), never by a join the planner may make a scan of the whole table.
 * @internal
 */
export function inboxBatchSql(n: InboxNames) {
  return {
    /**
     * `ids[], receipts[], keys[], agents[], kinds[], signals[], controls[], maxPer, max, windowMs` →
     * `[index (1-based), status, receiptId, key, seq, acceptedAt]` for each: `accept` for several
     * entries in one transaction (schema 2).
     */
    acceptMany:
      `SELECT * FROM ${n.acceptMany.sql}($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], ` +
      `$8::integer, $9::bigint, $10::bigint)`,
    /** A worker's settles and delivery counts made while one was in flight: a statement per shape ({@link finishManySql}). */
    ...finishVariants(n),
    /**
     * Appends of several receipts' logs made while one was in flight, in one: `receiptIds[],
     * attempts[], eventEntry[] (1-based index of each event's receipt), events[]` → a row
     * `[index]` for every receipt appended to (one whose entry is gone has none), each receipt's
     * events in order after its log's last, each with its notice (`v` + receipt id), as the
     * single `publish` sends it.
     */
    publishBatch:
      `WITH r AS (SELECT * FROM unnest($1::text[], $2::integer[]) WITH ORDINALITY AS r(receipt_id, attempt, i)), ` +
      `t AS (SELECT * FROM unnest($3::integer[], $4::text[]) WITH ORDINALITY AS t(i, ev, ord)), ` +
      `per AS (SELECT i, count(*)::integer AS n FROM t GROUP BY i), ` +
      `locked AS (SELECT e.receipt_id, r.i, r.attempt, per.n FROM ${n.entries.sql} e JOIN r ON r.receipt_id = e.receipt_id ` +
      `JOIN per ON per.i = r.i ORDER BY e.receipt_id FOR UPDATE OF e), ` +
      `next AS (UPDATE ${n.entries.sql} e SET next_event = e.next_event + l.n FROM locked l WHERE e.receipt_id = l.receipt_id ` +
      `RETURNING l.i, l.attempt, e.receipt_id, e.next_event - l.n AS base), ` +
      `added AS (INSERT INTO ${n.events.sql} (receipt_id, event_offset, attempt, event) ` +
      `SELECT next.receipt_id, next.base + row_number() OVER (PARTITION BY t.i ORDER BY t.ord), next.attempt, t.ev ` +
      `FROM next JOIN t ON t.i = next.i RETURNING 1), ` +
      `notes AS (SELECT pg_notify('${n.channel}', 'v' || receipt_id) FROM (SELECT receipt_id FROM next ORDER BY i) x) ` +
      `SELECT i::integer FROM next WHERE (SELECT count(*) FROM notes) >= 0 AND (SELECT count(*) FROM added) >= 0`,
  } as const;
}

/**
 * What a `finishMany` batch holds: settles (and whether any carries events, or is poisoned, so
 * that a dead letter may be written), delivery counts. A part a batch does not need is left out
 * of its statement: the server sets up every part of a statement on every run, empty or not.
 * @internal
 */
export interface FinishShape {
  readonly settles: boolean;
  readonly events: boolean;
  readonly poisoned: boolean;
  readonly counts: boolean;
}

/** The key of the statement of a batch of `shape` in the inbox's statements (`finishMany_<parts>`). @internal */
export function finishManyKey(shape: FinishShape): FinishKey {
  if (!shape.settles) return 'finishMany_c';
  return `finishMany_s${shape.events ? 'e' : ''}${shape.poisoned ? 'd' : ''}${shape.counts ? 'c' : ''}` as FinishKey;
}

/** The keys {@link finishManyKey} gives. */
type FinishKey = `finishMany_${'c' | `s${'' | 'e'}${'' | 'd'}${'' | 'c'}`}`;

/** Every shape a batch may have: delivery counts only, or settles with or without each other part. */
const FINISH_SHAPES: readonly FinishShape[] = [
  { settles: false, events: false, poisoned: false, counts: true },
  ...[false, true].flatMap((events) =>
    [false, true].flatMap((poisoned) => [false, true].map((counts) => ({ settles: true, events, poisoned, counts }))),
  ),
];

/** A statement for every shape a batch may have (prepared on a connection only when used). */
function finishVariants(n: InboxNames): Record<FinishKey, string> {
  return Object.fromEntries(FINISH_SHAPES.map((shape) => [finishManyKey(shape), finishManySql(n, shape)])) as Record<
    FinishKey,
    string
  >;
}

/**
 * A worker's settles and delivery counts made while one such statement was in flight, in one
 * (the parts `shape` leaves out are not in it, nor their parameters; those present are numbered
 * in this order):
 * - settles: `receiptIds[], outcomes[], ttlMs[], poisoned[], attempts[]`, with events `eventEntry[]
 *   (1-based index of each event's receipt), events[]` → a row `['s', index, outcome stored,
 *   entry removed, events added]` for every receipt: the single `settle` for each, with their
 *   notices (`v`, then `o` + receipt id, which the single settle's caller sends after it);
 * - delivery counts: `receiptIds[], tokens[] (null: not checked)` → a row `['b', index, null,
 *   null, attempts]` for each delivery counted (an entry gone or whose lease is lost has none).
 * The two never name the same entry (the batcher keeps one call per receipt id in a batch).
 */
function finishManySql(n: InboxNames, shape: FinishShape): string {
  const settles = shape.settles ? settleCtes(n, shape) : undefined;
  const countsFrom = shape.settles ? (shape.events ? 8 : 6) : 1;
  const counts = shape.counts ? beginCtes(n, countsFrom) : undefined;
  const selects = [
    ...(settles === undefined
      ? []
      : [`SELECT 's'::text, i::integer, stored, removed, added FROM done WHERE (SELECT count(*) FROM notes) >= 0`]),
    ...(counts === undefined
      ? []
      : [`SELECT 'b'::text, i::integer, NULL::boolean, NULL::boolean, attempts FROM b_counted`]),
  ];
  return `WITH ${[settles, counts].filter((p) => p !== undefined).join(', ')} ${selects.join(' UNION ALL ')}`;
}

/**
 * The settle half of `finishMany`: its arguments are $1-$5, and $6-$7 with events; `done` lists
 * what each did, `notes` sends their notices. Without events or poisoned entries in the batch, their
 * parts are left out.
 */
function settleCtes(n: InboxNames, { events, poisoned }: FinishShape): string {
  // What the parts present read of the entries they lock (a dead letter copies the entry).
  const entryColumns = poisoned
    ? 'x.receipt_id, x.session_key, x.seq, x.agent_id, x.signal, x.control, x.accepted_at, x.attempts, x.next_event'
    : events
      ? 'x.receipt_id, x.next_event'
      : 'x.receipt_id';
  const eventCtes =
    `ev AS (SELECT r.receipt_id, r.attempt, t.ev, row_number() OVER (PARTITION BY t.at ORDER BY t.n) AS ord ` +
    `FROM unnest($6::integer[], $7::text[]) WITH ORDINALITY AS t(at, ev, n) JOIN r ON r.i = t.at), ` +
    `added AS (INSERT INTO ${n.events.sql} (receipt_id, event_offset, attempt, event) ` +
    `SELECT ev.receipt_id, e.next_event + ev.ord, ev.attempt, ev.ev FROM ev JOIN e ON e.receipt_id = ev.receipt_id ` +
    `RETURNING receipt_id), `;
  const deadCte =
    `dead AS (INSERT INTO ${n.dead.sql} AS d (receipt_id, put_order, session_key, seq, agent_id, signal, control, accepted_at, attempts, expires_at) ` +
    `SELECT e.receipt_id, nextval('${n.order.sql}'), e.session_key, e.seq, e.agent_id, e.signal, e.control, e.accepted_at, e.attempts, put.expires_at ` +
    `FROM e JOIN put ON put.receipt_id = e.receipt_id JOIN r ON r.receipt_id = e.receipt_id WHERE r.poisoned ` +
    `ON CONFLICT (receipt_id) DO UPDATE SET put_order = excluded.put_order, session_key = excluded.session_key, seq = excluded.seq, ` +
    `agent_id = excluded.agent_id, signal = excluded.signal, control = excluded.control, accepted_at = excluded.accepted_at, ` +
    `attempts = excluded.attempts, expires_at = excluded.expires_at), `;
  return (
    `r AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[], $5::integer[]) ` +
    `WITH ORDINALITY AS r(receipt_id, outcome, ttl, poisoned, attempt, i)), ` +
    `e AS (SELECT ${entryColumns} ` +
    `FROM ${n.entries.sql} x WHERE x.receipt_id = ANY ($1::text[]) ORDER BY x.receipt_id FOR UPDATE), ` +
    (events ? eventCtes : '') +
    `put AS (INSERT INTO ${n.outcomes.sql} AS o (receipt_id, outcome, expires_at) ` +
    `SELECT r.receipt_id, r.outcome, clock_timestamp() + ${ms('r.ttl')} FROM r ORDER BY r.receipt_id ` +
    `ON CONFLICT (receipt_id) DO UPDATE ` +
    `SET outcome = excluded.outcome, expires_at = excluded.expires_at WHERE o.expires_at <= clock_timestamp() ` +
    `RETURNING o.receipt_id, o.expires_at), ` +
    (poisoned ? deadCte : '') +
    `gone AS (DELETE FROM ${n.entries.sql} x USING e WHERE x.receipt_id = e.receipt_id AND x.receipt_id = ANY ($1::text[]) ` +
    `RETURNING x.receipt_id, x.session_key), ` +
    `per_key AS (SELECT session_key, count(*)::integer AS n FROM gone GROUP BY session_key), ` +
    `keys_locked AS (SELECT k.key, p.n FROM ${n.keys.sql} k JOIN per_key p ON p.session_key = k.key ` +
    `WHERE k.key = ANY (ARRAY(SELECT session_key FROM per_key)) ORDER BY k.key FOR UPDATE OF k), ` +
    `k AS (UPDATE ${n.keys.sql} k SET pending = k.pending - l.n, ` +
    `waiting_since = CASE WHEN k.pending = l.n THEN NULL ELSE k.waiting_since END ` +
    `FROM keys_locked l WHERE k.key = l.key AND k.key = ANY (ARRAY(SELECT key FROM keys_locked)) RETURNING k.key, l.n), ` +
    `per_shard AS (SELECT ${settledShard('key')} AS shard, sum(n) AS n FROM k GROUP BY 1), ` +
    `shards_locked AS (SELECT c.shard, s.n FROM ${n.counters.sql} c JOIN per_shard s ON s.shard = c.shard ORDER BY c.shard FOR UPDATE OF c), ` +
    `c AS (UPDATE ${n.counters.sql} c SET pending = c.pending - l.n FROM shards_locked l WHERE c.shard = l.shard), ` +
    `done AS (SELECT r.i, r.receipt_id, EXISTS (SELECT 1 FROM put WHERE put.receipt_id = r.receipt_id) AS stored, ` +
    `EXISTS (SELECT 1 FROM gone WHERE gone.receipt_id = r.receipt_id) AS removed, ` +
    (events ? `(SELECT count(*) FROM added WHERE added.receipt_id = r.receipt_id)::integer` : '0') +
    ` AS added FROM r), ` +
    // The notices in the statement (one round trip less than after it): new events, then the outcome.
    `notes AS (SELECT pg_notify('${n.channel}', p) FROM (SELECT 'v' || receipt_id, 1, i FROM done WHERE added > 0 ` +
    `UNION ALL SELECT 'o' || receipt_id, 2, i FROM done WHERE stored OR removed ORDER BY 2, 3) x(p))`
  );
}

/** The delivery-count half of `finishMany`: receipt ids `$<from>`, lease tokens `$<from + 1>`; `b_counted` lists the counts. */
function beginCtes(n: InboxNames, from: number): string {
  const ids = `$${String(from)}::text[]`;
  const tokens = `$${String(from + 1)}::text[]`;
  return (
    `b_r AS (SELECT * FROM unnest(${ids}, ${tokens}) WITH ORDINALITY AS r(receipt_id, token, i)), ` +
    `b_locked AS (SELECT e.receipt_id, b_r.i, b_r.token FROM ${n.entries.sql} e JOIN b_r ON b_r.receipt_id = e.receipt_id ` +
    `WHERE e.receipt_id = ANY (${ids}) AND (b_r.token IS NULL OR EXISTS (SELECT 1 FROM ${n.keys.sql} k WHERE k.key = e.session_key ` +
    `AND k.lease_token = b_r.token AND k.lease_expires > clock_timestamp())) ORDER BY e.receipt_id FOR UPDATE OF e), ` +
    `b_counted AS (UPDATE ${n.entries.sql} e SET attempts = e.attempts + 1, delivery_token = b_locked.token ` +
    `FROM b_locked WHERE e.receipt_id = b_locked.receipt_id AND e.receipt_id = ANY (${ids}) RETURNING b_locked.i, e.attempts)`
  );
}

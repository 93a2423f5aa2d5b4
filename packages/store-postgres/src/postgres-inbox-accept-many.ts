import { COUNTER_SHARDS, iso, type InboxNames } from './postgres-inbox-names.js';

/**
 * The function a batch of accepts calls (schema 2): each accept as the `_accept` function makes it
 * — in one transaction, so the batch shares one commit (one WAL flush) and one round trip. Its
 * rows are `[index (1-based), status, receiptId, key, seq, acceptedAt]`, one per accept.
 *
 * Locks are taken in one global order, so batches (from many producers) and single accepts never
 * wait for each other in a circle: every dedupe id's advisory lock first (sorted), then the keys'
 * rows in key order (`COLLATE "C"`, as the settles lock them; a key's accepts in call order, so
 * they take consecutive `seq`s in that order), then the counter shards in shard order, once, at
 * the end. A key's row lock is held until commit, as for a single accept: a batch's entries of a
 * key commit in `seq` order with it, and no later `seq` is visible before an earlier one. The
 * limits are checked as each accept comes (`maxPending` against the total at the start plus
 * what the batch added); a refused accept writes nothing and the others go on.
 * @internal
 */
export function acceptManyFunction(n: InboxNames): string {
  return `CREATE OR REPLACE FUNCTION ${n.acceptMany.sql}(
  p_ids text[], p_receipts text[], p_keys text[], p_agents text[], p_kinds text[], p_signals text[], p_controls text[],
  p_max_per integer, p_max bigint, p_window_ms bigint
) RETURNS TABLE (o_i integer, o_status text, o_receipt text, o_key text, o_seq text, o_at text)
LANGUAGE plpgsql AS $accept_many$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_at text;
  v_total bigint;
  v_added_keys text[] := '{}';
  v_seq bigint;
  r record;
  s record;
BEGIN
  v_at := ${iso('v_now')};
  PERFORM pg_advisory_xact_lock(${n.lockClass}, h) FROM (SELECT DISTINCT hashtext(x) AS h FROM unnest(p_ids) x ORDER BY 1) l;
  SELECT sum(c.pending) INTO v_total FROM ${n.counters.sql} c;
  FOR r IN SELECT t.* FROM unnest(p_ids, p_receipts, p_keys, p_agents, p_kinds, p_signals, p_controls)
      WITH ORDINALITY AS t(id, receipt, key, agent, kind, signal, control, i)
      ORDER BY t.key COLLATE "C", t.i LOOP
    o_i := r.i;
    SELECT 'seen'::text, d.receipt_id, d.session_key, d.seq::text, ${iso('d.accepted_at')}
      INTO o_status, o_receipt, o_key, o_seq, o_at
      FROM ${n.dedupe.sql} d WHERE d.id = r.id AND d.expires_at > v_now;
    IF FOUND THEN RETURN NEXT; CONTINUE; END IF;
    o_receipt := NULL; o_key := NULL; o_seq := NULL; o_at := NULL;
    IF v_total + cardinality(v_added_keys) >= p_max THEN
      o_status := 'full_inbox'; RETURN NEXT; CONTINUE;
    END IF;
    v_seq := NULL;
    INSERT INTO ${n.keys.sql} AS k (key, last_seq, pending, waiting_since)
      VALUES (r.key, 1, 1, nextval('${n.order.sql}'))
      ON CONFLICT (key) DO UPDATE SET last_seq = k.last_seq + 1, pending = k.pending + 1,
        waiting_since = CASE WHEN k.pending = 0 THEN excluded.waiting_since ELSE k.waiting_since END
        WHERE k.pending < p_max_per
      RETURNING k.last_seq INTO v_seq;
    IF v_seq IS NULL THEN
      o_status := 'full_session'; RETURN NEXT; CONTINUE;
    END IF;
    INSERT INTO ${n.entries.sql} (receipt_id, session_key, seq, agent_id, kind, signal, control, accepted_at)
      VALUES (r.receipt, r.key, v_seq, r.agent, r.kind, r.signal, r.control, v_now);
    INSERT INTO ${n.dedupe.sql} AS d (id, receipt_id, session_key, seq, accepted_at, expires_at)
      VALUES (r.id, r.receipt, r.key, v_seq, v_now, v_now + p_window_ms * interval '1 millisecond')
      ON CONFLICT (id) DO UPDATE SET receipt_id = excluded.receipt_id, session_key = excluded.session_key,
        seq = excluded.seq, accepted_at = excluded.accepted_at, expires_at = excluded.expires_at;
    v_added_keys := v_added_keys || r.key;
    o_status := 'new'; o_receipt := r.receipt; o_key := r.key; o_seq := v_seq::text; o_at := v_at;
    RETURN NEXT;
  END LOOP;
  FOR s IN SELECT hashtext(x) & ${COUNTER_SHARDS - 1} AS shard, count(*) AS n FROM unnest(v_added_keys) x GROUP BY 1 ORDER BY 1 LOOP
    UPDATE ${n.counters.sql} SET pending = pending + s.n WHERE shard = s.shard;
  END LOOP;
END
$accept_many$`;
}

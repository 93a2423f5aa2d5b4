import type Database from 'libsql';

type Statement = Database.Statement;

/**
 * The columns an entry is read with, in this order. `seq` is read as text (exact beyond 2^53);
 * order by `inbox_entries.seq`, since a bare `seq` in ORDER BY would name this text alias.
 */
const ENTRY = 'receipt_id, session_key, CAST(seq AS TEXT) AS seq, agent_id, signal, control, accepted_at, attempts';

/** The SQL of the inbox's statements (keys in {@link InboxStatements}). */
const SQL = {
  seen: 'SELECT receipt_id, session_key, CAST(seq AS TEXT) AS seq, accepted_at FROM inbox_dedupe WHERE id = ? AND expires > ?',
  keyPending: 'SELECT pending FROM inbox_keys WHERE key = ?',
  totalPending: "SELECT value FROM inbox_meta WHERE name = 'pending'",
  nextSeq:
    'INSERT INTO inbox_keys (key, last_seq, pending, waiting_since) VALUES (:key, 1, 1, NULL) ' +
    'ON CONFLICT (key) DO UPDATE SET last_seq = last_seq + 1, pending = pending + 1, ' +
    'waiting_since = CASE WHEN pending = 0 THEN NULL ELSE waiting_since END ' +
    'RETURNING CAST(last_seq AS TEXT) AS seq',
  waitingSince: 'UPDATE inbox_keys SET waiting_since = ? WHERE key = ? AND waiting_since IS NULL',
  insertEntry:
    'INSERT INTO inbox_entries (receipt_id, session_key, seq, agent_id, kind, signal, control, accepted_at, origin) ' +
    'VALUES (:receiptId, :key, CAST(:seq AS INTEGER), :agentId, :kind, :signal, :control, :acceptedAt, :origin)',
  remember:
    'INSERT INTO inbox_dedupe (id, receipt_id, session_key, seq, accepted_at, expires) ' +
    'VALUES (:id, :receiptId, :key, CAST(:seq AS INTEGER), :acceptedAt, :expires) ' +
    'ON CONFLICT (id) DO UPDATE SET receipt_id = excluded.receipt_id, session_key = excluded.session_key, ' +
    'seq = excluded.seq, accepted_at = excluded.accepted_at, expires = excluded.expires',
  addPending: "UPDATE inbox_meta SET value = value + ? WHERE name = 'pending'",
  freeKeys:
    'SELECT key FROM inbox_keys WHERE pending > 0 AND (lease_token IS NULL OR lease_expires <= :now) ' +
    'ORDER BY waiting_since, key LIMIT :max',
  lease:
    'UPDATE inbox_keys SET lease_worker = :worker, lease_token = lower(hex(randomblob(16))), ' +
    'lease_expires = :expires, lease_ms = :leaseMs WHERE key = :key RETURNING lease_token',
  renew:
    'UPDATE inbox_keys SET lease_expires = :now + lease_ms WHERE key = :key AND lease_token = :token AND lease_expires > :now',
  leaseOf: 'SELECT lease_expires, pending FROM inbox_keys WHERE key = ? AND lease_token = ?',
  undoDeliveries:
    'UPDATE inbox_entries SET attempts = attempts - 1, delivery_token = NULL WHERE session_key = ? AND delivery_token = ?',
  unlease:
    'UPDATE inbox_keys SET lease_worker = NULL, lease_token = NULL, lease_expires = NULL, lease_ms = NULL ' +
    'WHERE key = ? AND lease_token = ?',
  leaseLive: 'SELECT 1 FROM inbox_keys WHERE key = ? AND lease_token = ? AND lease_expires > ?',
  entriesAfter: `SELECT ${ENTRY} FROM inbox_entries WHERE session_key = ? AND inbox_entries.seq > CAST(? AS INTEGER) ORDER BY inbox_entries.seq LIMIT ?`,
  beginDelivery:
    'UPDATE inbox_entries SET attempts = attempts + 1, delivery_token = :token WHERE receipt_id = :receiptId ' +
    'AND (:token IS NULL OR EXISTS (SELECT 1 FROM inbox_keys k WHERE k.key = inbox_entries.session_key ' +
    'AND k.lease_token = :token AND k.lease_expires > :now)) RETURNING attempts',
  entryExists: 'SELECT 1 FROM inbox_entries WHERE receipt_id = ?',
  deleteEntry: 'DELETE FROM inbox_entries WHERE receipt_id = ? RETURNING session_key',
  settleKey:
    'UPDATE inbox_keys SET pending = pending - 1, waiting_since = CASE WHEN pending = 1 THEN NULL ELSE waiting_since END ' +
    'WHERE key = ?',
  liveOutcome: 'SELECT outcome FROM inbox_outcomes WHERE receipt_id = ? AND expires > ?',
  dropEvents: 'DELETE FROM inbox_events WHERE receipt_id = ?',
  dropExpiredOutcome: 'DELETE FROM inbox_outcomes WHERE receipt_id = ? AND expires <= ?',
  insertOutcome:
    'INSERT INTO inbox_outcomes (receipt_id, outcome, expires) VALUES (?, ?, ?) ON CONFLICT (receipt_id) DO NOTHING',
  dropDead: 'DELETE FROM inbox_dead WHERE receipt_id = ?',
  keepDead:
    'INSERT INTO inbox_dead (receipt_id, session_key, seq, agent_id, signal, control, accepted_at, attempts, expires) ' +
    'SELECT receipt_id, session_key, seq, agent_id, signal, control, accepted_at, attempts, ? FROM inbox_entries WHERE receipt_id = ?',
  publish:
    'INSERT INTO inbox_events (receipt_id, attempt, event) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM inbox_entries WHERE receipt_id = ?)',
  eventsAfter:
    'SELECT CAST(id AS TEXT) AS event_offset, attempt, event FROM inbox_events WHERE receipt_id = ? AND id > CAST(? AS INTEGER) ORDER BY id LIMIT ?',
  inFlight:
    'SELECT e.receipt_id FROM inbox_entries e WHERE e.session_key = ? ' +
    'AND EXISTS (SELECT 1 FROM inbox_events v WHERE v.receipt_id = e.receipt_id) ORDER BY e.seq DESC LIMIT 1',
  notice: 'INSERT INTO inbox_notices (session_key, what, at, origin) VALUES (?, ?, ?, ?)',
  deadLetters:
    'SELECT d.receipt_id, d.session_key, CAST(d.seq AS TEXT) AS seq, d.agent_id, d.signal, d.control, d.accepted_at, d.attempts, o.outcome ' +
    'FROM inbox_dead d JOIN inbox_outcomes o ON o.receipt_id = d.receipt_id WHERE d.expires > :now AND o.expires > :now ' +
    'ORDER BY d.id LIMIT :limit',
  pendingAll: `SELECT ${ENTRY} FROM inbox_entries ORDER BY session_key, inbox_entries.seq LIMIT ?`,
  pendingOf: `SELECT ${ENTRY} FROM inbox_entries WHERE session_key = ? ORDER BY inbox_entries.seq LIMIT ?`,
  leases:
    'SELECT key, lease_worker, lease_expires FROM inbox_keys WHERE lease_token IS NOT NULL AND lease_expires > ? ORDER BY key',
  marks:
    "SELECT (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'inbox_notices') AS notice, " +
    "(SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'inbox_entries') AS entry, " +
    "(SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'inbox_outcomes') AS outcome, " +
    "(SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'inbox_events') AS event",
  newNotices: 'SELECT id, session_key, what, origin FROM inbox_notices WHERE id > ? ORDER BY id',
  newEntries: 'SELECT id, session_key, origin FROM inbox_entries WHERE id > ? ORDER BY id',
  newOutcomes: 'SELECT id, receipt_id FROM inbox_outcomes WHERE id > ? ORDER BY id',
  newEvents: 'SELECT max(id) AS id, receipt_id FROM inbox_events WHERE id > ? GROUP BY receipt_id',
  sweepDedupe: 'DELETE FROM inbox_dedupe WHERE expires <= ?',
  sweepEvents:
    'DELETE FROM inbox_events WHERE receipt_id IN (SELECT receipt_id FROM inbox_outcomes WHERE expires <= ?) ' +
    'AND receipt_id NOT IN (SELECT receipt_id FROM inbox_entries)',
  sweepOutcomes: 'DELETE FROM inbox_outcomes WHERE expires <= ?',
  sweepDead: 'DELETE FROM inbox_dead WHERE expires <= ?',
  sweepNotices: 'DELETE FROM inbox_notices WHERE at <= ?',
} as const;

/** The prepared statements of one inbox connection, one per entry of the SQL table. @internal */
export type InboxStatements = { readonly [K in keyof typeof SQL]: Statement };

/** Prepares the inbox's statements on `db` (whose schema is ready). @internal */
export function prepareInboxStatements(db: Database.Database): InboxStatements {
  const prepared: Partial<Record<keyof typeof SQL, Statement>> = {};
  for (const name of Object.keys(SQL) as (keyof typeof SQL)[]) prepared[name] = db.prepare(SQL[name]);
  return prepared as InboxStatements;
}

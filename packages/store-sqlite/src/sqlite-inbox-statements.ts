import type Database from 'libsql';

type Statement = Database.Statement;

/**
 * The columns an entry is read with, in this order. `seq` is read as text (exact beyond 2^53);
 * order by `inbox_entries.seq`, since a bare `seq` in ORDER BY would name this text alias.
 */
const ENTRY = 'receipt_id, session_key, CAST(seq AS TEXT) AS seq, agent_id, signal, control, accepted_at, attempts';

/** The inbox's pending count is below `:maxPending`. */
const BELOW_MAX_PENDING = "(SELECT value FROM inbox_meta WHERE name = 'pending') < :maxPending";
/** The key's pending count is below `:maxSession` (a key without a row has none). */
const BELOW_MAX_SESSION = 'coalesce((SELECT pending FROM inbox_keys WHERE key = :key), 0) < :maxSession';

/** The SQL of the inbox's statements (keys in {@link InboxStatements}). */
const SQL = {
  seen: 'SELECT receipt_id, session_key, CAST(seq AS TEXT) AS seq, accepted_at FROM inbox_dedupe WHERE id = ? AND expires > ?',
  keyPending: 'SELECT pending FROM inbox_keys WHERE key = ?',
  // The entry inserted with the key's next seq, only below both pending limits (no row returned:
  // a limit is hit, nothing written); the schema's trigger raises the pending counts, sets the
  // key's last_seq and its waiting mark.
  insertEntry:
    'INSERT INTO inbox_entries (receipt_id, session_key, seq, agent_id, kind, signal, control, accepted_at, origin) ' +
    'SELECT :receiptId, :key, coalesce((SELECT last_seq FROM inbox_keys WHERE key = :key), 0) + 1, :agentId, :kind, ' +
    `:signal, :control, :acceptedAt, :origin WHERE ${BELOW_MAX_SESSION} AND ${BELOW_MAX_PENDING} ` +
    'RETURNING CAST(seq AS TEXT) AS seq',
  // The dedupe id remembered with the seq the accept is about to allocate (the key's last + 1),
  // unless a live one is there (no change: the caller reads it with `seen`); an expired one is
  // replaced.
  remember:
    'INSERT INTO inbox_dedupe (id, receipt_id, session_key, seq, accepted_at, expires) ' +
    'VALUES (:id, :receiptId, :key, coalesce((SELECT last_seq FROM inbox_keys WHERE key = :key), 0) + 1, :acceptedAt, :expires) ' +
    'ON CONFLICT (id) DO UPDATE SET receipt_id = excluded.receipt_id, session_key = excluded.session_key, ' +
    'seq = excluded.seq, accepted_at = excluded.accepted_at, expires = excluded.expires WHERE inbox_dedupe.expires <= :now',
  forget: 'DELETE FROM inbox_dedupe WHERE id = ?',
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
  // The lease's entries after a seq, with the lease checked in the same statement: no row when
  // the lease is not held, one row without an entry (receipt_id NULL) when none is left; and
  // SQLite's data_version as of the same snapshot.
  leasedAfter:
    'SELECT (SELECT data_version FROM pragma_data_version) AS data_version, k.lease_expires AS lease_expires, e.receipt_id, e.session_key, CAST(e.seq AS TEXT) AS seq, e.agent_id, ' +
    'e.signal, e.control, e.accepted_at, e.attempts FROM inbox_keys k LEFT JOIN inbox_entries e ' +
    'ON e.session_key = k.key AND e.seq > CAST(:after AS INTEGER) ' +
    'WHERE k.key = :key AND k.lease_token = :token AND k.lease_expires > :now ORDER BY e.seq LIMIT :limit',
  dataVersion: 'PRAGMA data_version',
  beginDelivery:
    'UPDATE inbox_entries SET attempts = attempts + 1, delivery_token = :token WHERE receipt_id = :receiptId ' +
    'AND (:token IS NULL OR EXISTS (SELECT 1 FROM inbox_keys k WHERE k.key = inbox_entries.session_key ' +
    'AND k.lease_token = :token AND k.lease_expires > :now)) RETURNING attempts',
  entryExists: 'SELECT 1 FROM inbox_entries WHERE receipt_id = ?',
  // The entry removed (the schema's trigger lowers the pending counts).
  deleteEntry: 'DELETE FROM inbox_entries WHERE receipt_id = ? RETURNING session_key',
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
  insertEvent: 'INSERT INTO inbox_events (receipt_id, attempt, event) VALUES (?, ?, ?)',
  insertEvents2: 'INSERT INTO inbox_events (receipt_id, attempt, event) VALUES (?1, ?2, ?3), (?1, ?2, ?4)',
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

/**
 * The statements of every entry's path that return one value: prepared raw (a row is an array,
 * cheaper to make than an object with named columns).
 */
const RAW: ReadonlySet<keyof typeof SQL> = new Set(['insertEntry', 'beginDelivery', 'deleteEntry', 'dataVersion']);

/** Prepares the inbox's statements on `db` (whose schema is ready). @internal */
export function prepareInboxStatements(db: Database.Database): InboxStatements {
  const prepared: Partial<Record<keyof typeof SQL, Statement>> = {};
  for (const name of Object.keys(SQL) as (keyof typeof SQL)[]) {
    const statement = db.prepare(SQL[name]);
    prepared[name] = RAW.has(name) ? statement.raw() : statement;
  }
  return prepared as InboxStatements;
}

import { errorText } from '@signalyard/core/internal';
import type { Pool, PoolClient } from 'pg';
import { PostgresStoreError } from './errors/postgres-store-error.js';
import { acceptManyFunction } from './postgres-inbox-accept-many.js';
import { COUNTER_SHARDS, iso, type InboxNames } from './postgres-inbox-names.js';
import { migrateUnderLock } from './postgres-migrate-lock.js';
import { pgCodeOf } from './postgres-schema.js';
import { suffixedTable } from './postgres-table-name.js';

/**
 * The schema version of the inbox's tables this release writes and reads. `migrate()` records it
 * as the entries table's comment (`@signalyard/store-postgres inbox schema 3`), upgrades an
 * inbox of an earlier version in place (its entries, leases and outcomes kept) and refuses a
 * table marked with a higher one. Version 1: the entries table and its `_keys`, `_dedupe`,
 * `_outcomes`, `_dead`, `_events` and `_counters` tables, the `_order` sequence and the
 * `_accept` function (see the scaling-out guide's layout section). Version 2: the
 * `_accept_many` function (a batch of accepts in one transaction), the waiting keys' index
 * partial on `waiting_since IS NOT NULL`, `fillfactor` on the keys, counters and entries tables.
 * Version 3: the `_counters` rows settles count off on, apart from the accepts' rows.
 *
 * @example
 * ```ts
 * // What a table says about itself (psql): \dt+ signalyard_inbox  → "@signalyard/store-postgres inbox schema 3"
 * console.log(`this release writes inbox schema ${POSTGRES_INBOX_SCHEMA_VERSION}`);
 * ```
 */
export const POSTGRES_INBOX_SCHEMA_VERSION = 3;

const MARK = '@signalyard/store-postgres inbox schema ';
const MARK_PATTERN = /^@signalyard\/store-postgres inbox schema (\d+)$/;

/** Reads the comment of the entries table (`$1`, as SQL): `NULL` when there is no such table. @internal */
export const INBOX_MARK_QUERY = `SELECT obj_description(to_regclass($1), 'pg_class')`;

/** Whether `comment` (from {@link INBOX_MARK_QUERY}) marks an inbox's entries table, of any schema version. @internal */
export function isInboxMark(comment: unknown): boolean {
  return typeof comment === 'string' && MARK_PATTERN.test(comment);
}

/** The columns of the entries table, with their types as `format_type` names them. */
const ENTRY_COLUMNS = [
  'receipt_id text',
  'session_key text',
  'seq bigint',
  'agent_id text',
  'kind text',
  'signal text',
  'control text',
  'accepted_at timestamp with time zone',
  'attempts integer',
  'delivery_token text',
  'next_event bigint',
];

/** The statements that create version 1 (each idempotent). */
function schema1(n: InboxNames): string[] {
  return [
    `CREATE SEQUENCE IF NOT EXISTS ${n.order.sql}`,
    `CREATE TABLE IF NOT EXISTS ${n.keys.sql} (
  key text COLLATE "C" NOT NULL PRIMARY KEY,
  last_seq bigint NOT NULL,
  pending integer NOT NULL,
  waiting_since bigint,
  lease_worker text,
  lease_token text,
  lease_expires timestamptz,
  lease_ms integer
)`,
    `CREATE INDEX IF NOT EXISTS ${n.keysWaiting} ON ${n.keys.sql} (waiting_since) WHERE pending > 0`,
    `CREATE TABLE IF NOT EXISTS ${n.entries.sql} (
  receipt_id text NOT NULL PRIMARY KEY,
  session_key text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  agent_id text,
  kind text NOT NULL,
  signal text NOT NULL,
  control text,
  accepted_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  delivery_token text,
  next_event bigint NOT NULL DEFAULT 0,
  UNIQUE (session_key, seq)
)`,
    `CREATE TABLE IF NOT EXISTS ${n.dedupe.sql} (
  id text NOT NULL PRIMARY KEY,
  receipt_id text NOT NULL,
  session_key text NOT NULL,
  seq bigint NOT NULL,
  accepted_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS ${n.dedupeExpires} ON ${n.dedupe.sql} (expires_at)`,
    `CREATE TABLE IF NOT EXISTS ${n.outcomes.sql} (
  receipt_id text NOT NULL PRIMARY KEY,
  outcome text NOT NULL,
  expires_at timestamptz NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS ${n.outcomesExpires} ON ${n.outcomes.sql} (expires_at)`,
    `CREATE TABLE IF NOT EXISTS ${n.dead.sql} (
  receipt_id text NOT NULL PRIMARY KEY,
  put_order bigint NOT NULL,
  session_key text NOT NULL,
  seq bigint NOT NULL,
  agent_id text,
  signal text NOT NULL,
  control text,
  accepted_at timestamptz NOT NULL,
  attempts integer NOT NULL,
  expires_at timestamptz NOT NULL
)`,
    `CREATE TABLE IF NOT EXISTS ${n.events.sql} (
  receipt_id text NOT NULL,
  event_offset bigint NOT NULL,
  attempt integer NOT NULL,
  event text NOT NULL,
  PRIMARY KEY (receipt_id, event_offset)
)`,
    `CREATE TABLE IF NOT EXISTS ${n.counters.sql} (
  shard smallint NOT NULL PRIMARY KEY,
  pending bigint NOT NULL
)`,
    `INSERT INTO ${n.counters.sql} (shard, pending) SELECT g, 0 FROM generate_series(0, ${COUNTER_SHARDS - 1}) g ON CONFLICT (shard) DO NOTHING`,
    acceptFunction(n),
  ];
}

/**
 * The function `accept` calls: one round trip, one transaction. Accepts of one dedupe id take
 * turns (a transaction advisory lock), so a retry racing its first attempt finds its receipt;
 * the session's `seq` comes from its `_keys` row, whose lock is held until commit, so accepts of
 * one key commit in `seq` order; the limits are checked before anything is written. It does not
 * `NOTIFY` (that would serialise every accept's commit): the caller announces the entry after.
 */
function acceptFunction(n: InboxNames): string {
  return `CREATE OR REPLACE FUNCTION ${n.accept.sql}(
  p_id text, p_receipt text, p_key text, p_agent text, p_kind text, p_signal text, p_control text,
  p_max_per integer, p_max bigint, p_window_ms bigint
) RETURNS TABLE (status text, receipt_id text, session_key text, seq text, accepted_at text)
LANGUAGE plpgsql AS $accept$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_seq bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(${n.lockClass}, hashtext(p_id));
  RETURN QUERY SELECT 'seen'::text, d.receipt_id, d.session_key, d.seq::text, ${iso('d.accepted_at')}
    FROM ${n.dedupe.sql} d WHERE d.id = p_id AND d.expires_at > v_now;
  IF FOUND THEN RETURN; END IF;
  IF (SELECT sum(c.pending) FROM ${n.counters.sql} c) >= p_max THEN
    RETURN QUERY SELECT 'full_inbox'::text, NULL::text, NULL::text, NULL::text, NULL::text;
    RETURN;
  END IF;
  INSERT INTO ${n.keys.sql} AS k (key, last_seq, pending, waiting_since)
    VALUES (p_key, 1, 1, nextval('${n.order.sql}'))
    ON CONFLICT (key) DO UPDATE SET last_seq = k.last_seq + 1, pending = k.pending + 1,
      waiting_since = CASE WHEN k.pending = 0 THEN excluded.waiting_since ELSE k.waiting_since END
      WHERE k.pending < p_max_per
    RETURNING k.last_seq INTO v_seq;
  IF v_seq IS NULL THEN
    RETURN QUERY SELECT 'full_session'::text, NULL::text, NULL::text, NULL::text, NULL::text;
    RETURN;
  END IF;
  INSERT INTO ${n.entries.sql} (receipt_id, session_key, seq, agent_id, kind, signal, control, accepted_at)
    VALUES (p_receipt, p_key, v_seq, p_agent, p_kind, p_signal, p_control, v_now);
  INSERT INTO ${n.dedupe.sql} AS d (id, receipt_id, session_key, seq, accepted_at, expires_at)
    VALUES (p_id, p_receipt, p_key, v_seq, v_now, v_now + p_window_ms * interval '1 millisecond')
    ON CONFLICT (id) DO UPDATE SET receipt_id = excluded.receipt_id, session_key = excluded.session_key,
      seq = excluded.seq, accepted_at = excluded.accepted_at, expires_at = excluded.expires_at;
  UPDATE ${n.counters.sql} SET pending = pending + 1 WHERE shard = (hashtext(p_key) & ${COUNTER_SHARDS - 1});
  RETURN QUERY SELECT 'new'::text, p_receipt, p_key, v_seq::text, ${iso('v_now')};
END
$accept$`;
}

/**
 * Version 2: fewer index writes per entry, the same rows. The waiting keys' index is partial on
 * `waiting_since IS NOT NULL` (set exactly while `pending > 0`) instead of `pending > 0`, so an
 * accept or a settle that leaves `waiting_since` as it was is a HOT update of the key's row (no
 * index entry written): an indexed column, or one in an index's predicate, changed is what
 * makes an update write every index of its table. Pages are filled to `fillfactor` only, leaving
 * room for those new row versions (and for the entries' delivery counts) in their own page.
 */
function schema2(n: InboxNames): string[] {
  return [
    `DROP INDEX IF EXISTS ${suffixedTable(n.entries, '_keys_waiting').sql}`,
    `CREATE INDEX ${n.keysWaiting} ON ${n.keys.sql} (waiting_since) WHERE waiting_since IS NOT NULL`,
    `ALTER TABLE ${n.keys.sql} SET (fillfactor = 50)`,
    `ALTER TABLE ${n.counters.sql} SET (fillfactor = 50)`,
    `ALTER TABLE ${n.entries.sql} SET (fillfactor = 80)`,
    acceptManyFunction(n),
  ];
}

/**
 * Version 3: the counter rows settles (and acks) count their entries off on — `COUNTER_SHARDS`
 * more rows, starting at 0 — so a settle never waits for the counter row of an accept in flight
 * (and then re-checks its rows against the accept's commit), nor an accept for a settle's. The
 * pending total stays the sum of every row: nothing is moved, and a release of schema 2 running
 * beside it during an upgrade (counting off on the accepts' rows) keeps the sum right.
 */
function schema3(n: InboxNames): string[] {
  return [
    `INSERT INTO ${n.counters.sql} (shard, pending) SELECT g, 0 FROM generate_series(${String(COUNTER_SHARDS)}, ${String(2 * COUNTER_SHARDS - 1)}) g ON CONFLICT (shard) DO NOTHING`,
  ];
}

/** What brings the inbox from version `i` to version `i + 1`. */
const MIGRATIONS: readonly ((n: InboxNames) => string[])[] = [schema1, schema2, schema3];

/**
 * Brings the inbox's objects to this release's schema, in one transaction under a
 * transaction-scoped advisory lock per table name (processes migrating at once take turns; a
 * failure changes nothing; once migrated, a call only reads). Refuses an entries table marked
 * with a newer schema, or one of another shape.
 * @throws PostgresStoreError `POSTGRES_MIGRATE_FAILED`, `POSTGRES_SCHEMA_UNSUPPORTED`.
 * @internal
 */
export async function migrateInbox(pool: Pool, n: InboxNames): Promise<void> {
  await migrateUnderLock(
    pool,
    `signalyard.migrate:${n.entries.name}`,
    (client) => migrateLocked(client, n),
    (what, error) => migrateFailed(n, what, error),
  );
}

async function migrateLocked(client: PoolClient, n: InboxNames): Promise<void> {
  const found = await client.query<[string | null, string | null]>({
    text: `SELECT to_regclass($1)::text, obj_description(to_regclass($1), 'pg_class')`,
    values: [n.entries.sql],
    rowMode: 'array',
  });
  const [table, comment] = found.rows[0] ?? [null, null];
  const marked = comment === null ? undefined : MARK_PATTERN.exec(comment);
  const version = marked == null ? 0 : Number(marked[1]);
  if (version > POSTGRES_INBOX_SCHEMA_VERSION) {
    throw new PostgresStoreError({
      code: 'POSTGRES_SCHEMA_UNSUPPORTED',
      table: n.entries.name,
      message:
        `Inbox table ${n.entries.name} has schema version ${version}, expected ${POSTGRES_INBOX_SCHEMA_VERSION} or lower: ` +
        'it was migrated by a newer @signalyard/store-postgres; upgrade to use it',
    });
  }
  if (table !== null) await checkEntries(client, n);
  if (version === POSTGRES_INBOX_SCHEMA_VERSION) return;
  for (let v = version; v < POSTGRES_INBOX_SCHEMA_VERSION; v++) {
    for (const statement of (MIGRATIONS[v] as (n: InboxNames) => string[])(n)) await client.query(statement);
  }
  await checkEntries(client, n);
  await client.query(`COMMENT ON TABLE ${n.entries.sql} IS '${MARK}${POSTGRES_INBOX_SCHEMA_VERSION}'`);
}

/** Refuses an entries table whose columns are not the inbox's (it belongs to something else). */
async function checkEntries(client: PoolClient, n: InboxNames): Promise<void> {
  const found = await client.query<[string, string]>({
    text: `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
            WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    values: [n.entries.sql],
    rowMode: 'array',
  });
  const columns = found.rows.map(([name, type]) => `${name} ${type}`);
  if (columns.length !== ENTRY_COLUMNS.length || ENTRY_COLUMNS.some((c, i) => columns[i] !== c)) {
    throw new PostgresStoreError({
      code: 'POSTGRES_MIGRATE_FAILED',
      table: n.entries.name,
      message:
        `Table ${n.entries.name} exists with columns ${JSON.stringify(columns)}, expected ${JSON.stringify(ENTRY_COLUMNS)}: ` +
        'it belongs to something else; give the inbox a table of its own (the table option)',
    });
  }
}

function migrateFailed(n: InboxNames, what: string, error: unknown): PostgresStoreError {
  const pgCode = pgCodeOf(error);
  return new PostgresStoreError({
    code: 'POSTGRES_MIGRATE_FAILED',
    table: n.entries.name,
    message: `Cannot migrate inbox table ${n.entries.name}: ${what}: ${errorText(error)}`,
    ...(pgCode !== undefined && { pgCode }),
    cause: error,
  });
}

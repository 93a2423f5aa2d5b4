import { createHash } from 'node:crypto';
import type { TableName } from './postgres-table-name.js';

/** `updated_at` as ISO-8601 in UTC with milliseconds, formatted by the server (no type parser involved). */
const ISO_UPDATED_AT = `to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** How many versions below its window a save prunes (a store with a larger keepVersions may have kept them). */
const PRUNE_SPAN = 16;
/** Every how many versions a save prunes every version below its window (older leftovers included). */
const SWEEP_EVERY = 64;

/** The SQL of one checkpoint table and its history table, built once per store. @internal */
export interface Statements {
  /** `$1` key → `[version, data, updatedAt]`. */
  readonly load: string;
  /** `$1` key → `[version]`. */
  readonly version: string;
  /** `$1` key, `$2` data, `$3` time (ISO 8601) → `[1]`, or no row when the key exists. */
  readonly insert: string;
  /**
   * `$1` key, `$2` data, `$3` expected version, `$4` keepVersions, `$5` time (ISO 8601) →
   * `[new version]`, or no row when the compare-and-set lost.
   */
  readonly update: string;
  /**
   * `update` for several keys at once (each key once): `$1` keys[], `$2` data[], `$3` expected
   * versions[], `$4` keepVersions, `$5` times[] → a row `[index (1-based)]` for every key whose
   * compare-and-set won.
   */
  readonly updateMany: string;
  /** `$1` key. */
  readonly delete: string;
  readonly listAll: string;
  readonly listFrom: string;
  readonly listRange: string;
  /** `$1` key, `$2` keepVersions, `$3` before, `$4` limit (null: none) → `[version, data, updatedAt]` rows, newest first. */
  readonly history: string;
  /** `$1` key, `$2` keepVersions, `$3` version → `[version, data, updatedAt]`, or no row. */
  readonly loadVersion: string;
}

/**
 * The statements of a store over `table` and its history table `history`. Each is one
 * statement, so it runs as one transaction and reads one snapshot.
 *
 * A save keeps its history in the same statement as its compare-and-set: the version it
 * replaces is read under a row lock (`FOR UPDATE`, which re-checks the expected version after
 * waiting for a concurrent writer) and copied into the history table, the row is updated, and
 * the versions beyond `keepVersions` are deleted — all or nothing, and never without a current
 * version. The delete looks only just below the window (a bounded index range, whatever the
 * pruned versions not yet vacuumed), and below that every 64th version: a store with a smaller
 * `keepVersions` sharing the table prunes the older versions of a larger one within 64 saves. Deleting a checkpoint deletes its history through the history table's foreign key.
 * @internal
 */
export function buildStatements(table: TableName, history: TableName): Statements {
  const t = table.sql;
  const h = history.sql;
  // The kept versions of $1: the current row, and the history rows below it within the $2
  // versions before it (rows a store with a larger keepVersions left are not listed).
  const kept =
    `SELECT version, data, updated_at FROM ${t} WHERE key = $1 ` +
    `UNION ALL ` +
    `SELECT v.version, v.data, v.updated_at FROM ${h} v JOIN ${t} c ON c.key = v.key ` +
    `WHERE v.key = $1 AND v.version < c.version AND v.version >= c.version - $2::bigint`;
  // A save's CTEs after `old` (the rows it replaced: key, version, data, updated_at), for `update`
  // and `updateMany` alike: the replaced versions copied into the history table (in `order`), and
  // the range of history versions leaving the window (see `update`'s comment below).
  const keptCte = (order: string): string =>
    `kept AS (INSERT INTO ${h} (key, version, data, updated_at) ` +
    `SELECT key, version, data, updated_at FROM old WHERE $4::bigint > 0 ${order}` +
    `ON CONFLICT (key, version) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at), `;
  const leaving =
    `v.version <= old.version - $4::bigint ` +
    `AND v.version > CASE WHEN old.version % ${SWEEP_EVERY} = 0 THEN '-9223372036854775808'::bigint ` +
    `ELSE old.version - $4::bigint - ${PRUNE_SPAN} END`;
  return {
    load: `SELECT version::text, data, ${ISO_UPDATED_AT} FROM ${t} WHERE key = $1`,
    version: `SELECT version::text FROM ${t} WHERE key = $1`,
    // A new key starts with no history (the DELETE finds nothing while the foreign key holds;
    // it also makes a save against a schema without the history table fail as outdated).
    insert:
      `WITH made AS (INSERT INTO ${t} (key, version, data, updated_at) VALUES ($1, 1, $2, $3::timestamptz) ` +
      `ON CONFLICT (key) DO NOTHING RETURNING version), ` +
      `cleared AS (DELETE FROM ${h} WHERE key = $1 AND EXISTS (SELECT 1 FROM made)) ` +
      `SELECT version::text FROM made`,
    update:
      `WITH old AS (` +
      `UPDATE ${t} c SET version = c.version + 1, data = $2, updated_at = greatest($5::timestamptz, c.updated_at) ` +
      `FROM (SELECT key, version, data, updated_at FROM ${t} WHERE key = $1 AND version = $3 FOR UPDATE) o ` +
      `WHERE c.key = o.key ` +
      `RETURNING c.version AS new_version, o.key, o.version, o.data, o.updated_at), ` +
      keptCte('') +
      // The versions leaving the window: those just below it (one per save while keepVersions
      // stays; up to PRUNE_SPAN after a store with a larger keepVersions saved), and every 64th
      // version all of them. A range open below would walk every version pruned since the last
      // VACUUM (their dead index entries and heap rows): a save's cost would grow with the
      // session's age between vacuums (7x a save without history after a few thousand saves).
      // One DELETE, its range's lower end chosen by the version (a bounded range either way, for
      // the index). Its bounds come from `old` (whose version is $3), not from the parameters: a
      // custom plan would fold `$3 % 64 = 0` away (and estimate the range from the values), look
      // cheaper than the generic plan, and the server would plan this statement afresh on every save.
      `pruned AS (DELETE FROM ${h} v USING old WHERE v.key = $1 AND ${leaving}) ` +
      `SELECT new_version::text FROM old`,
    // `update` over arrays, one transaction: the rows are locked in key order (two batches never
    // wait for each other in a circle), each re-checked against its expected version after a wait
    // (FOR UPDATE re-evaluates the join on the row's latest version); rows are found by the key's
    // index (= ANY), the history rows to prune by (key, version) for each saved key.
    updateMany:
      `WITH r AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $5::timestamptz[]) ` +
      `WITH ORDINALITY AS r(key, data, version, at, i)), ` +
      `o AS (SELECT c.key, c.version, c.data, c.updated_at, r.i, r.data AS new_data, r.at FROM ${t} c ` +
      `JOIN r ON r.key = c.key AND r.version = c.version WHERE c.key = ANY ($1::text[]) ORDER BY c.key FOR UPDATE OF c), ` +
      `old AS (UPDATE ${t} c SET version = c.version + 1, data = o.new_data, updated_at = greatest(o.at, c.updated_at) ` +
      `FROM o WHERE c.key = o.key AND c.key = ANY ($1::text[]) ` +
      `RETURNING o.i, o.key, o.version, o.data, o.updated_at), ` +
      keptCte('ORDER BY key ') +
      `pruned AS (DELETE FROM ${h} v USING old WHERE v.key = old.key AND v.key = ANY ($1::text[]) AND ${leaving}) ` +
      `SELECT i::integer FROM old`,
    delete: `DELETE FROM ${t} WHERE key = $1`,
    listAll: `SELECT key FROM ${t}`,
    listFrom: `SELECT key FROM ${t} WHERE key >= $1 COLLATE "C"`,
    listRange: `SELECT key FROM ${t} WHERE key >= $1 COLLATE "C" AND key < $2 COLLATE "C"`,
    history:
      `SELECT version::text, data, ${ISO_UPDATED_AT} FROM (${kept}) k ` +
      `WHERE k.version < $3::bigint ORDER BY k.version DESC LIMIT $4::bigint`,
    loadVersion: `SELECT version::text, data, ${ISO_UPDATED_AT} FROM (${kept}) k WHERE k.version = $3::bigint`,
  };
}

/**
 * A prepared statement name for each statement: `signalyard_` and a hash of its text, so stores
 * over different tables sharing a pool never collide (PostgreSQL keeps names per connection), and
 * stores over the same table share the statements they prepared.
 * @internal
 */
export function statementNames(statements: object): Map<string, string> {
  const names = new Map<string, string>();
  for (const text of Object.values(statements) as string[]) {
    names.set(text, `signalyard_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`);
  }
  return names;
}

/** The length of a name {@link statementNames} makes (a renamed statement adds `_<n>`; PostgreSQL keeps 63). @internal */
export const STATEMENT_NAME_CHARS = 35;

import { createHash } from 'node:crypto';
import { suffixedTable, type TableName } from './postgres-table-name.js';

/** The names of one inbox's objects, all derived from its entries table's name. @internal */
export interface InboxNames {
  /** The entries table, as configured. */
  readonly entries: TableName;
  readonly keys: TableName;
  readonly dedupe: TableName;
  readonly outcomes: TableName;
  readonly dead: TableName;
  readonly events: TableName;
  readonly counters: TableName;
  /** The sequence that orders waiting keys and dead letters. */
  readonly order: TableName;
  /** The function `accept` calls. */
  readonly accept: TableName;
  /** The function a batch of accepts calls (schema 2). */
  readonly acceptMany: TableName;
  /** Index names (unqualified: an index lives in its table's schema). */
  readonly keysWaiting: string;
  readonly dedupeExpires: string;
  readonly outcomesExpires: string;
  /** The `LISTEN`/`NOTIFY` channel (an identifier, unquoted). */
  readonly channel: string;
  /** The first key of the transaction advisory locks that serialise accepts of one dedupe id. */
  readonly lockClass: number;
}

/** The names of the inbox whose entries table is `table`. @internal */
export function inboxNames(table: TableName): InboxNames {
  const hash = createHash('sha256').update(table.name).digest();
  const unqualified = (suffix: string): string => suffixedTable(table, suffix).sql.split('.').pop() as string;
  return {
    entries: table,
    keys: suffixedTable(table, '_keys'),
    dedupe: suffixedTable(table, '_dedupe'),
    outcomes: suffixedTable(table, '_outcomes'),
    dead: suffixedTable(table, '_dead'),
    events: suffixedTable(table, '_events'),
    counters: suffixedTable(table, '_counters'),
    order: suffixedTable(table, '_order'),
    accept: suffixedTable(table, '_accept'),
    acceptMany: suffixedTable(table, '_accept_many'),
    keysWaiting: unqualified('_keys_waiting'),
    dedupeExpires: unqualified('_dedupe_expires'),
    outcomesExpires: unqualified('_outcomes_expires'),
    channel: `signalyard_inbox_${hash.toString('hex').slice(0, 16)}`,
    lockClass: hash.readInt32BE(0),
  };
}

/** `column` (a timestamptz) as ISO-8601 in UTC with milliseconds, formatted by the server. @internal */
export function iso(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** How many rows the pending counter is spread over (accepts of different keys seldom wait for each other). @internal */
export const COUNTER_SHARDS = 16;

/**
 * The counter row a settle (or an ack) of `keyExpr` counts its entry off on (schema 3): one of
 * {@link COUNTER_SHARDS} rows of their own, after the accepts' rows, so that a settle never waits
 * for an accept's counter row (nor an accept for a settle's) — the pending total is the sum of
 * every row, these holding what was settled (as negative numbers).
 * @internal
 */
export function settledShard(keyExpr: string): string {
  return `${String(COUNTER_SHARDS)} + (hashtext(${keyExpr}) & ${String(COUNTER_SHARDS - 1)})`;
}

import { createHash } from 'node:crypto';
import { describeValue } from '@signalyard/core';

/** The table a {@link PostgresCheckpointStore} uses when given no `table` option. */
export const DEFAULT_CHECKPOINT_TABLE = 'signalyard_checkpoints';

const PART = /^[a-z_][a-z0-9_]*$/;
/** PostgreSQL truncates identifiers longer than this (NAMEDATALEN - 1): refuse them instead. */
const MAX_PART_LENGTH = 63;

/** A validated table name: as given, and as SQL (each part double-quoted). @internal */
export interface TableName {
  /** As configured: `name` or `schema.name`. */
  readonly name: string;
  /** Quoted for SQL: `"name"` or `"schema"."name"`. */
  readonly sql: string;
}

/**
 * Parses a table name: `name` or `schema.name`, each part lower-case ASCII letters, digits and
 * `_`, not starting with a digit, at most 63 characters — so the quoted and unquoted forms name
 * the same table and nothing is ever spliced into SQL unchecked. Returns the reason (a string)
 * when the name is not one.
 * @internal
 */
export function parseTableName(value: unknown): TableName | string {
  if (typeof value !== 'string')
    return `expected a table name such as "signalyard_checkpoints" or "app.sessions", got ${describeValue(value)}`;
  const parts = value.split('.');
  const ok = parts.length <= 2 && parts.every((part) => PART.test(part) && part.length <= MAX_PART_LENGTH);
  if (!ok) {
    return (
      `expected a table name such as "signalyard_checkpoints" or "app.sessions" (lower-case letters, digits and "_", ` +
      `not starting with a digit, at most ${MAX_PART_LENGTH} characters per part, an optional schema before one "."), got ${describeValue(value)}`
    );
  }
  return { name: value, sql: parts.map((part) => `"${part}"`).join('.') };
}

/**
 * The history table that goes with a checkpoint table: `<name>_history` in the same schema (see
 * {@link suffixedTable}).
 * @internal
 */
export function historyTableOf(table: TableName): TableName {
  return suffixedTable(table, '_history');
}

/**
 * A name made from a table's: `<name><suffix>` in the same schema. When that would exceed 63
 * characters, the name is cut and a hash of the whole name is put in
 * (`<first characters>_<8 hex digits><suffix>`), so two long names never share one.
 * @internal
 */
export function suffixedTable(table: TableName, suffix: string): TableName {
  const parts = table.name.split('.');
  const last = parts.pop() as string;
  const name =
    last.length + suffix.length <= MAX_PART_LENGTH
      ? `${last}${suffix}`
      : `${last.slice(0, MAX_PART_LENGTH - suffix.length - 9)}_${createHash('sha256').update(last).digest('hex').slice(0, 8)}${suffix}`;
  parts.push(name);
  return { name: parts.join('.'), sql: parts.map((part) => `"${part}"`).join('.') };
}

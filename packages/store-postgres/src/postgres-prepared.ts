import type { QueryArrayConfig, QueryArrayResult } from 'pg';
import { pgCodeOf } from './postgres-schema.js';
import { STATEMENT_NAME_CHARS, statementNames } from './postgres-statements.js';

/** Something that runs a query: a `pg.Pool` or a connection taken from one. @internal */
export interface Queryable {
  query(config: QueryArrayConfig): Promise<QueryArrayResult>;
}

/**
 * Runs a fixed set of statements, as named prepared statements (parsed and planned once per
 * connection) or — with `prepared` false, for a pooler that cannot keep them — unnamed. A
 * statement the server forgot (`DEALLOCATE ALL`, `DISCARD ALL`) or can no longer reuse (a column's
 * type changed) runs unnamed for that call and is prepared under a new name from then on: the
 * server ran nothing when it refused it. Rows come back as arrays.
 * @internal
 */
export class PreparedStatements {
  /** Statement text → its prepared statement's name; `undefined` when not preparing. */
  readonly #names: Map<string, string> | undefined;
  /** How often a lost prepared statement was renamed (the suffix of the next new name). */
  #renames = 0;

  constructor(statements: object, prepared: boolean) {
    this.#names = prepared ? statementNames(statements) : undefined;
  }

  /** Runs `text` (one of the statements) with `values` on `on`. */
  async run(on: Queryable, text: string, values: unknown[]): Promise<unknown[][]> {
    const name = this.#names?.get(text);
    try {
      return (await on.query(queryConfig(text, values, name))).rows as unknown[][];
    } catch (error) {
      if (name === undefined || !lostPreparedStatement(error)) throw error;
      this.#names?.set(text, `${name.slice(0, STATEMENT_NAME_CHARS)}_${++this.#renames}`);
      return (await on.query(queryConfig(text, values, undefined))).rows as unknown[][];
    }
  }
}

/** A statement's `pg` config: named (prepared once per connection) when `name` is given. */
function queryConfig(text: string, values: unknown[], name: string | undefined): QueryArrayConfig {
  return name === undefined ? { text, values, rowMode: 'array' } : { name, text, values, rowMode: 'array' };
}

/**
 * True for the server's refusal of a prepared statement that nothing ran: it does not exist
 * (26000, after `DEALLOCATE ALL` or `DISCARD ALL`), or its cached plan cannot serve it any more
 * (0A000 "cached plan must not change result type", after a column's type changed).
 */
function lostPreparedStatement(error: unknown): boolean {
  const code = pgCodeOf(error);
  if (code === '26000') return true;
  return code === '0A000' && error instanceof Error && error.message.includes('cached plan');
}

import { Batcher } from './postgres-batcher.js';
import { pgCodeOf } from './postgres-schema.js';
import type { Statements } from './postgres-statements.js';

/** A save's compare-and-set update, as the update batcher takes it. @internal */
export interface UpdateCall {
  readonly key: string;
  readonly text: string;
  readonly expected: number;
  readonly at: string;
}

/** A save's update as its batch answers it: whether its compare-and-set won, or the error of its own statement. @internal */
export type UpdateResult = boolean | { readonly error: unknown };

/** Runs a statement (prepared by its text) on the store's pool: its rows. */
type RunStatement = (text: string, values: unknown[]) => Promise<unknown[][]>;

/**
 * Errors whose statement the server refused and rolled back, nothing written: a data or
 * integrity error, a transaction rolled back (deadlock, serialization), a missing object or
 * privilege, a program limit, a cancel (`statement_timeout`), a PL/pgSQL `RAISE` (a trigger).
 * Not a connection or server failure (classes 08, 53, 57P0x, 58, XX): whether those committed is
 * unknown, so a save is not sent again for them.
 */
const REFUSED = /^(?:22|23|25|40|42|44|54|P0)|^57014$/;

/**
 * The compare-and-set updates of a store's saves, in a group commit: while `inFlight` update
 * statements are out, the saves made meanwhile (of other keys: a key's saves never share one) go
 * out together as one statement — one round trip, one transaction, one commit and WAL flush.
 * Should the server refuse a batch (one save's data or a trigger, a `statement_timeout`:
 * {@link REFUSED}, nothing written), its saves are sent again one at a time, so that one save's
 * error stays its own; a connection failure fails every save of the batch, as it would fail a
 * save sent alone.
 * @internal
 */
export function updateBatcher(
  run: RunStatement,
  sql: Pick<Statements, 'update' | 'updateMany'>,
  keepVersions: number,
  inFlight: number,
): Batcher<UpdateCall, UpdateResult> {
  const one = async (u: UpdateCall): Promise<boolean> =>
    (await run(sql.update, [u.key, u.text, u.expected, keepVersions, u.at])).length === 1;
  const many = async (calls: readonly UpdateCall[]): Promise<UpdateResult[]> => {
    const values = [
      calls.map((u) => u.key),
      calls.map((u) => u.text),
      calls.map((u) => u.expected),
      keepVersions,
      calls.map((u) => u.at),
    ];
    let rows: unknown[][];
    try {
      rows = await run(sql.updateMany, values);
    } catch (error) {
      if (!REFUSED.test(pgCodeOf(error) ?? '')) throw error;
      return Promise.all(calls.map((u) => one(u).catch((e: unknown) => ({ error: e }))));
    }
    const won = new Set(rows.map((row) => row[0]));
    return calls.map((_, i) => won.has(i + 1));
  };
  return new Batcher<UpdateCall, UpdateResult>({ one, many, idOf: (u) => u.key }, inFlight);
}

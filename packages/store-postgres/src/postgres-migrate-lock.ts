import type { Pool, PoolClient } from 'pg';
import { PostgresStoreError } from './errors/postgres-store-error.js';

/**
 * Runs a migration's `steps` in one transaction on a connection of its own, holding the
 * transaction advisory lock named `lockName` (`hashtextextended`), so processes migrating at once
 * take turns and a failure changes nothing. A `PostgresStoreError` from the steps passes through;
 * any other failure (no connection, a refused statement) is reported through `failed(what, error)`.
 * After a failure the connection is closed, not given back: its state is unknown.
 * @internal
 */
export async function migrateUnderLock(
  pool: Pool,
  lockName: string,
  steps: (client: PoolClient) => Promise<void>,
  failed: (what: string, error: unknown) => PostgresStoreError,
): Promise<void> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw failed('cannot connect', error);
  }
  let broken = false;
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockName]);
      await steps(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } catch (error) {
    broken = !PostgresStoreError.isInstance(error);
    if (!broken) throw error;
    throw failed('cannot create or check the tables', error);
  } finally {
    client.release(broken);
  }
}

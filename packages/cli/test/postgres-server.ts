// The PostgreSQL server the tests use: DATABASE_URL, or the one the project's machines run
// (postgres://postgres@127.0.0.1:5432/test, trust auth). When none answers, the suites that need
// it are skipped with the reason printed — or, with SIGNALYARD_REQUIRE_POSTGRES=1 (CI), fail.
// Each test works in tables of its own (`sy_cli_<pid>_<random>`), dropped at the end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, it } from 'vitest';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REQUIRED = process.env.SIGNALYARD_REQUIRE_POSTGRES === '1';

async function probe(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    const shown = DATABASE_URL.replace(/:\/\/([^:@/]+):[^@/]*@/, '://$1:***@');
    return `no PostgreSQL server answered at ${shown} (${error instanceof Error ? error.message || error.name : String(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Why the server cannot be used, or `undefined` when it can. */
const unavailable = await probe();

/**
 * `describe` for tests that need the server: skipped with a printed reason when there is none,
 * or failing when SIGNALYARD_REQUIRE_POSTGRES=1 says the server must be there.
 */
export function describePostgres(name: string, fn: () => void): void {
  if (unavailable === undefined) {
    describe(name, fn);
  } else if (REQUIRED) {
    describe(name, () => {
      it('needs a PostgreSQL server (SIGNALYARD_REQUIRE_POSTGRES=1)', () => {
        throw new Error(`SIGNALYARD_REQUIRE_POSTGRES=1 but ${unavailable}: set DATABASE_URL or start the server`);
      });
    });
  } else {
    console.warn(
      `[cli] SKIPPED "${name}": ${unavailable}. Set DATABASE_URL to run it; SIGNALYARD_REQUIRE_POSTGRES=1 makes this a failure.`,
    );
    describe.skip(name, fn);
  }
}

const tables = new Set<string>();

/** A checkpoint table name no other test run uses; dropped (with its history table) by {@link dropTables}. */
export function uniqueTable(): string {
  const table = `sy_cli_${process.pid}_${randomBytes(4).toString('hex')}`;
  tables.add(table);
  return table;
}

/** Runs one statement on the server (a short-lived connection). */
export async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** Drops every table {@link uniqueTable} named, and their history tables. */
export async function dropTables(): Promise<void> {
  if (unavailable !== undefined || tables.size === 0) return;
  const names = [...tables].flatMap((t) => [`"${t}_history"`, `"${t}"`]);
  await sql(`DROP TABLE IF EXISTS ${names.join(', ')}`);
  tables.clear();
}

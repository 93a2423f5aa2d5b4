// `signalyard inspect --store <url>` and the durable inbox in the same database: shown without
// --inbox when the database holds one under the default name (an SQLite file's inbox tables,
// PostgreSQL's signalyard_inbox), looked for without creating anything; --inbox requires one;
// --inbox --inbox-table names another.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { seed } from './session-fixtures.js';
import { runInProcess, startInspect } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-inspect-inbox-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const say = (text: string) => ({ kind: 'user_message' as const, payload: { text } });

/** `signalyard inspect <args>` in-process over this test's folder. */
async function inspect(args: readonly string[]) {
  const running = await startInspect(args, { cwd: dir });
  return { out: running.output(), get: running.get, stop: running.stop };
}

let files = 0;
/** An SQLite file with a session, and (with `withInbox`) an inbox holding one entry waiting. */
async function sqliteFile(withInbox: boolean): Promise<{ url: string; path: string }> {
  const name = `sessions-${++files}.db`;
  const path = join(dir, name);
  const store = new SqliteCheckpointStore({ path });
  await seed(store, 'agent:support:main');
  await store.close();
  if (withInbox) {
    const inbox = new SqliteInbox({ path });
    await inbox.accept({ sessionKey: 'agent:support:main', signal: say('next'), id: 'n1' });
    await inbox.close();
  }
  return { url: `sqlite:${name}`, path };
}

describe('signalyard inspect over an SQLite file', () => {
  it('shows the inbox beside the sessions without --inbox when the file holds one', async () => {
    const { url } = await sqliteFile(true);
    const { out, get, stop } = await inspect(['--store', url]);
    expect(out).toContain(`${url} with its inbox, read-only`);
    expect((await get('/api/info')).body).toMatchObject({ mode: 'offline', inbox: true });
    const waiting = await get('/api/inbox?key=agent:support:main');
    expect(waiting.body.entries).toEqual([expect.objectContaining({ seq: '1', kind: 'user_message', text: 'next' })]);
    expect((await get('/api/inbox/overview')).body).toMatchObject({
      pending: [{ sessionKey: 'agent:support:main', count: 1 }],
      leases: [],
      dead: [],
    });
    expect(await stop()).toBe(0);
  });

  it('a file without an inbox: no inbox views, and no inbox tables created', async () => {
    const { url, path } = await sqliteFile(false);
    const { out, get, stop } = await inspect(['--store', url]);
    expect(out).toContain(`(${url}, read-only`);
    expect((await get('/api/info')).body).toMatchObject({ inbox: false });
    expect((await get('/api/inbox/overview')).status).toBe(404);
    expect(await stop()).toBe(0);
    expect(SqliteInbox.existsIn(path)).toBe(false); // nothing was created
  });

  it('--inbox on a file without an inbox is an error (exit 2) that creates nothing; --inbox-table needs --inbox and PostgreSQL', async () => {
    const { url, path } = await sqliteFile(false);
    const result = await runInProcess(['inspect', '--store', url, '--port', '0', '--inbox'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`signalyard: error: "${url}" has no inbox: no SqliteInbox has opened this file\n`);
    expect(SqliteInbox.existsIn(path)).toBe(false); // nothing was created
    const table = await runInProcess(['inspect', '--store', url, '--inbox-table', 'x'], { cwd: dir });
    expect(table.code).toBe(2);
    expect(table.stderr).toContain('--inbox-table applies with --inbox only');
    const sqliteTable = await runInProcess(['inspect', '--store', url, '--inbox', '--inbox-table', 'x'], { cwd: dir });
    expect(sqliteTable.code).toBe(2);
    expect(sqliteTable.stderr).toContain('--inbox-table "x" applies to a postgres:// store only');
  });
});

describePostgres('signalyard inspect over PostgreSQL', () => {
  // Each case's tables live in a schema of their own, reached as the default names through the
  // connection's search_path (the `options` parameter of the URL).
  const schemas: string[] = [];
  const inSchema = (schema: string): string => {
    const url = new URL(DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return url.href;
  };
  async function database(withInbox: boolean): Promise<{ url: string; schema: string }> {
    const schema = uniqueTable('cli_inspect');
    schemas.push(schema);
    await adminPool().query(`CREATE SCHEMA "${schema}"`);
    const store = new PostgresCheckpointStore({
      connectionString: DATABASE_URL,
      table: `${schema}.signalyard_checkpoints`,
    });
    await store.migrate();
    await seed(store, 'agent:support:main');
    await store.close();
    if (withInbox) {
      const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table: `${schema}.signalyard_inbox` });
      await inbox.migrate();
      await inbox.accept({ sessionKey: 'agent:support:main', signal: say('next'), id: 'n1' });
      await inbox.close();
    }
    return { url: inSchema(schema), schema };
  }
  const tablesOf = async (schema: string): Promise<string[]> =>
    (
      await adminPool().query<{ t: string }>(
        `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`,
        [schema],
      )
    ).rows.map((r) => r.t);

  it('shows the database’s signalyard_inbox without --inbox', async () => {
    const { url } = await database(true);
    const { out, get, stop } = await inspect(['--store', url]);
    expect(out).toContain('with its inbox, read-only');
    expect((await get('/api/info')).body).toMatchObject({ inbox: true });
    expect((await get('/api/inbox/overview')).body).toMatchObject({
      pending: [{ sessionKey: 'agent:support:main', count: 1 }],
    });
    expect(await stop()).toBe(0);
  });

  it('a database without an inbox: no inbox views and nothing created; --inbox is an error naming the table', async () => {
    const { url, schema } = await database(false);
    const before = await tablesOf(schema);
    const { get, stop } = await inspect(['--store', url]);
    expect((await get('/api/info')).body).toMatchObject({ inbox: false });
    expect(await stop()).toBe(0);
    const required = await runInProcess(['inspect', '--store', url, '--port', '0', '--inbox'], { cwd: dir });
    expect(required.code).toBe(2);
    expect(required.stderr).toMatch(/has no inbox table "signalyard_inbox": no worker has migrated this inbox/);
    expect(await tablesOf(schema)).toEqual(before);
  });

  it('--inbox --inbox-table shows an inbox under another name', async () => {
    const { url, schema } = await database(false);
    const table = `${schema}.agent_inbox`;
    const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table });
    await inbox.migrate();
    await inbox.accept({ sessionKey: 'agent:support:b', signal: say('elsewhere'), id: 'e1' });
    await inbox.close();
    const { get, stop } = await inspect(['--store', url, '--inbox', '--inbox-table', table]);
    expect((await get('/api/inbox/overview')).body).toMatchObject({
      pending: [{ sessionKey: 'agent:support:b', count: 1 }],
    });
    expect(await stop()).toBe(0);
  });

  it('an unreachable server is exit 2, the password masked', async () => {
    const down = await runInProcess(
      ['inspect', '--store', 'postgres://nobody:secret@127.0.0.1:1/test', '--port', '0'],
      {
        cwd: dir,
      },
    );
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/cannot reach "postgres:\/\/nobody:\*\*\*@127.0.0.1:1\/test"/);
    expect(down.stderr).not.toContain('secret');
  });

  afterAll(async () => {
    for (const schema of schemas) await adminPool().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await dropTablesAndEnd([]);
  });
});

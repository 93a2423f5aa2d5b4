// `signalyard sessions` through the built bin, as a user runs it: the store packages load from
// their dist, stdout carries only the product, errors are one line on stderr.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { seed, sessionOf, withoutTimes } from './session-fixtures.js';
import { BUILD_TIMEOUT_MS, ensureBuiltCli, lines, runBuiltCli } from './support.js';

// Each test spawns the built CLI a few times: allow for a loaded machine.
vi.setConfig({ testTimeout: 60_000 });

const tables: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-bin-'));
beforeAll(async () => {
  ensureBuiltCli();
  const store = new SqliteCheckpointStore({ path: join(dir, 'sessions.db') });
  await seed(store, 'agent:support:main');
  await store.close();
}, BUILD_TIMEOUT_MS);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTablesAndEnd(tables);
});

const cli = (args: readonly string[]) => runBuiltCli(args, { cwd: dir });

describe('signalyard sessions (the built bin, SQLite)', () => {
  it('list, history, fork and show', async () => {
    const list = await cli(['sessions', 'list', '--store', 'sqlite:sessions.db']);
    expect(list.code).toBe(0);
    expect(list.stderr).toBe('');
    expect(lines(withoutTimes(list.stdout))).toEqual([
      'SESSION             AGENT    VERSION  UPDATED',
      'agent:support:main  support        4  YYYY-MM-DDTHH:MM:SS.sssZ',
    ]);
    const history = await cli(['sessions', 'history', 'agent:support:main', '--store', 'sqlite:sessions.db', '--json']);
    expect(lines(history.stdout).map((l) => (JSON.parse(l) as { version: number }).version)).toEqual([4, 3, 2, 1]);
    const fork = await cli([
      'sessions',
      'fork',
      'agent:support:main',
      'agent:support:copy',
      '--version',
      '3',
      '--store',
      'sqlite:sessions.db',
    ]);
    expect(fork).toEqual({
      code: 0,
      stdout: 'forked agent:support:main version 3 into agent:support:copy (version 1)\n',
      stderr: '',
    });
    const show = await cli(['sessions', 'show', 'agent:support:copy', '--store', 'sqlite:sessions.db', '--json']);
    expect(JSON.parse(show.stdout)).toMatchObject({
      version: 1,
      cause: { forkedFrom: { sessionKey: 'agent:support:main', version: 3 } },
    });
  });

  it('errors: one line on stderr; 1 for a refused session, 2 for a bad store', async () => {
    const exists = await cli([
      'sessions',
      'fork',
      'agent:support:main',
      'agent:support:main',
      '--store',
      'sqlite:sessions.db',
    ]);
    expect(exists.code).toBe(1);
    expect(exists.stdout).toBe('');
    expect(lines(exists.stderr)).toEqual([
      'signalyard: error: cannot fork into session "agent:support:main": it already exists (fork into a new key, or delete it first)',
    ]);
    const bad = await cli(['sessions', 'list', '--store', 'redis://localhost']);
    expect(bad.code).toBe(2);
    expect(lines(bad.stderr)).toEqual([
      'signalyard: error: --store "redis://localhost": unknown store type "redis:": expected sqlite:<path> (e.g. sqlite:./sessions.db) or a postgres:// connection string',
    ]);
  });

  it('--help of a subcommand lists the store options', async () => {
    const help = await cli(['sessions', 'fork', '--help']);
    expect(help.code).toBe(0);
    for (const option of ['--store <url>', '--table <name>', '--keep-versions <n>', '--migrate', '--version <n>']) {
      expect(help.stdout).toContain(option);
    }
  });
});

describePostgres('signalyard sessions (the built bin, PostgreSQL)', () => {
  it('list and history after --migrate', async () => {
    const table = uniqueTable('cli');
    tables.push(table);
    const s = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table });
    await s.migrate();
    await seed(s, 'agent:billing:main', [sessionOf('billing'), sessionOf('billing', 'again')]);
    await s.close();
    const list = await cli(['sessions', 'list', '--store', DATABASE_URL, '--table', table, '--json']);
    expect(list.stderr).toBe('');
    expect(lines(list.stdout).map((l) => JSON.parse(l) as unknown)).toEqual([
      { sessionKey: 'agent:billing:main', agentId: 'billing', version: 2, updatedAt: expect.any(String) },
    ]);
    const history = await cli(['sessions', 'history', 'agent:billing:main', '--store', DATABASE_URL, '--table', table]);
    expect(lines(withoutTimes(history.stdout))).toEqual([
      'VERSION  TIME                      CAUSE                 ROUTE  STATUS',
      '      2  YYYY-MM-DDTHH:MM:SS.sssZ  user_message "again"  -      completed',
      '      1  YYYY-MM-DDTHH:MM:SS.sssZ  user_message "hi"     -      completed',
    ]);
  });
});

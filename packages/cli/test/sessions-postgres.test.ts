// `signalyard sessions …` against PostgreSQL: each test in checkpoint tables of its own.
import type { SessionCheckpointV1 } from '@signalyard/core';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { collect } from '@signalyard/test-utils';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { afterAll, expect, it } from 'vitest';
import { PENDING, SUPPORT_VERSIONS, seed, sessionOf, withoutTimes } from './session-fixtures.js';
import { lines, runInProcess, type CliResult } from './support.js';

const tables: string[] = [];
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

/** A checkpoint table of this file's own, dropped (with its history table) after the file. */
function newTable(): string {
  const name = uniqueTable('cli');
  tables.push(name);
  return name;
}

/** A migrated table holding `agent:support:main` (4 versions) and `agent:billing:main`. */
async function database(): Promise<string> {
  const table = newTable();
  await withStore(table, async (store) => {
    await store.migrate();
    await seed(store, 'agent:support:main');
    await seed(store, 'agent:billing:main', [sessionOf('billing')]);
  });
  return table;
}

async function withStore<T>(table: string, fn: (store: PostgresCheckpointStore) => Promise<T>): Promise<T> {
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

const cli = (table: string, args: readonly string[]): Promise<CliResult> =>
  runInProcess([...args, '--store', DATABASE_URL, '--table', table]);

function expectError(result: CliResult, code: number, pattern: RegExp): void {
  expect(result.stdout).toBe('');
  expect(lines(result.stderr)).toHaveLength(1);
  expect(result.stderr).toMatch(pattern);
  expect(result.code).toBe(code);
}

describePostgres('signalyard sessions on PostgreSQL', () => {
  it('list: every session in key order, paged, as a table or JSON lines', async () => {
    const table = await database();
    const result = await cli(table, ['sessions', 'list']);
    expect(result.code).toBe(0);
    expect(lines(withoutTimes(result.stdout))).toEqual([
      'SESSION             AGENT    VERSION  UPDATED',
      'agent:billing:main  billing        1  YYYY-MM-DDTHH:MM:SS.sssZ',
      'agent:support:main  support        4  YYYY-MM-DDTHH:MM:SS.sssZ',
    ]);
    const page = await cli(table, ['sessions', 'list', '--json', '--after', 'agent:billing:main', '--limit', '5']);
    expect(lines(page.stdout).map((l) => JSON.parse(l) as unknown)).toEqual([
      { sessionKey: 'agent:support:main', agentId: 'support', version: 4, updatedAt: expect.any(String) },
    ]);
  });

  it('history: the version timeline newest first, and --json as Runner.history yields it', async () => {
    const table = await database();
    const result = await cli(table, ['sessions', 'history', 'agent:support:main', '--limit', '2']);
    expect(lines(withoutTimes(result.stdout))).toEqual([
      'VERSION  TIME                      CAUSE                                ROUTE           STATUS',
      '      4  YYYY-MM-DDTHH:MM:SS.sssZ  user_message "thanks", +2 merged     strategy/close  completed',
      '      3  YYYY-MM-DDTHH:MM:SS.sssZ  tool_approval, 1 approved, 0 denied  plugin          completed',
    ]);
    const json = await cli(table, ['sessions', 'history', 'agent:support:main', '--json', '--before', '2']);
    expect(lines(json.stdout).map((l) => JSON.parse(l) as unknown)).toEqual([
      {
        version: 1,
        updatedAt: expect.any(String),
        agentId: 'support',
        cause: SUPPORT_VERSIONS[0]?.cause,
        strategy: { type: 'fsm', current_state: 'open' },
        historyLength: 2,
        pendingApprovals: 0,
      },
    ]);
  });

  it('fork: version 1 of a new session with cause.forkedFrom; an existing target or another agent is refused', async () => {
    const table = await database();
    const result = await cli(table, ['sessions', 'fork', 'agent:support:main', 'agent:support:b', '--version', '2']);
    expect(result).toEqual({
      code: 0,
      stdout: 'forked agent:support:main version 2 into agent:support:b (version 1)\n',
      stderr: '',
    });
    const fork = await withStore(table, (s) => s.load('agent:support:b'));
    expect(fork?.version).toBe(1);
    // The pending approval is not re-opened: the fork holds it as stale.
    const { pendingApprovals: _pending, ...withoutPending } = SUPPORT_VERSIONS[1] as SessionCheckpointV1;
    expect(fork?.data).toEqual({
      ...withoutPending,
      staleApprovals: [{ id: PENDING.id, reason: 'stale: forked' }],
      cause: { at: expect.any(String), forkedFrom: { sessionKey: 'agent:support:main', version: 2 } },
    });
    expectError(
      await cli(table, ['sessions', 'fork', 'agent:support:main', 'agent:support:b']),
      1,
      /cannot fork into session "agent:support:b": it already exists/,
    );
    expectError(
      await cli(table, ['sessions', 'fork', 'agent:support:main', 'agent:billing:b']),
      1,
      /a session of agent "billing"/,
    );
    expect((await withStore(table, (s) => s.load('agent:support:main')))?.version).toBe(4);
  });

  it('rewind: a new version equal to the old one; show reads it back', async () => {
    const table = await database();
    expect((await cli(table, ['sessions', 'rewind', 'agent:support:main', '1'])).stdout).toBe(
      'rewound agent:support:main to version 1: saved as version 5\n',
    );
    const kept = await withStore(table, (s) => collect(s.history('agent:support:main')));
    expect(kept.map((c) => c.version)).toEqual([5, 4, 3, 2, 1]);
    expect(kept[0]?.data).toEqual({
      ...SUPPORT_VERSIONS[0],
      cause: { at: expect.any(String), rewoundTo: 1 },
    });
    const show = await cli(table, ['sessions', 'show', 'agent:support:main', '--json']);
    expect(JSON.parse(show.stdout)).toMatchObject({ version: 5, cause: { rewoundTo: 1 }, historyLength: 2 });
  });

  it('a database no runner has migrated: a clear error, and --migrate creates the tables', async () => {
    const table = newTable();
    expectError(
      await cli(table, ['sessions', 'list']),
      2,
      new RegExp(
        `has no checkpoint table ${table}: no runner has migrated this database \\(check --table, or pass --migrate`,
      ),
    );
    expect(await cli(table, ['sessions', 'list', '--migrate'])).toEqual({
      code: 0,
      stdout: 'no sessions\n',
      stderr: '',
    });
  });

  it('a table of the previous release: reading history says to --migrate; --migrate brings it forward', async () => {
    const table = newTable();
    await adminPool().query(`CREATE TABLE "${table}" (
  key text COLLATE "C" NOT NULL PRIMARY KEY,
  version bigint NOT NULL CHECK (version > 0),
  data text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
)`);
    const data: SessionCheckpointV1 = sessionOf('support', 'old release');
    await adminPool().query(`INSERT INTO "${table}" (key, version, data) VALUES ($1, 3, $2)`, [
      'agent:support:old',
      JSON.stringify(data),
    ]);
    expect((await cli(table, ['sessions', 'list', '--json'])).stdout).toContain('"agent:support:old"');
    expectError(
      await cli(table, ['sessions', 'history', 'agent:support:old']),
      2,
      /has the checkpoint schema of an earlier @signalyard\/store-postgres: run the command again with --migrate/,
    );
    expectError(
      await cli(table, ['sessions', 'rewind', 'agent:support:old', '3']),
      2,
      /run the command again with --migrate.*Nothing was written/,
    );
    const migrated = await cli(table, ['sessions', 'history', 'agent:support:old', '--json', '--migrate']);
    expect(lines(migrated.stdout).map((l) => (JSON.parse(l) as { version: number }).version)).toEqual([3]);
    expect((await cli(table, ['sessions', 'rewind', 'agent:support:old', '3'])).code).toBe(0);
  });

  it('a server that does not answer, or a bad --table: exit 2 naming it, the password masked', async () => {
    const url = new URL(DATABASE_URL);
    url.port = '1';
    url.password = 'hunter2';
    const result = await runInProcess(['sessions', 'list', '--store', url.href]);
    expectError(result, 2, /^signalyard: error: cannot reach "postgres:\/\/[^"]*:\*\*\*@[^"]*:1\//);
    expect(result.stderr).not.toContain('hunter2');
    expectError(
      await runInProcess(['sessions', 'list', '--store', url.href, '--migrate']),
      2,
      /^signalyard: error: cannot open "postgres:\/\/[^"]*:\*\*\*@[^"]*:1\/[^"]*": /,
    );
    expectError(await cli('Bad-Name', ['sessions', 'list']), 2, /--table "Bad-Name": expected a table name/);
  });
});

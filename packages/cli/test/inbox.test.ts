// `signalyard inbox list|dead` in-process against a SqliteInbox file and a PostgresInbox, whose
// entries are written with the inbox directly (as producers and workers would have).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Inbox, InboxEntry, OutcomeJson } from '@signalyard/core';
import { PostgresInbox } from '@signalyard/store-postgres';
import { SqliteInbox } from '@signalyard/store-sqlite';
import { collect } from '@signalyard/test-utils';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuiltCli, lines, runBuiltCli, runInProcess, type CliResult } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-inbox-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const say = (text: string) => ({ kind: 'user_message' as const, payload: { text } });

const poisoned = (sessionKey: string): OutcomeJson => ({
  sessionKey,
  agentId: 'desk',
  status: 'failed',
  error: { code: 'INBOX_POISONED', message: 'delivered 6 times without being settled', fields: { attempts: 6 } },
});

/**
 * Fills an inbox: three entries for `agent:desk:a` (leased by worker `w1`), one for a key holding
 * an escape sequence, and one poisoned entry of `agent:desk:p` (a dead letter).
 */
async function fill(inbox: Inbox): Promise<{ dead: InboxEntry }> {
  for (const text of ['one', 'two', 'three'])
    await inbox.accept({ sessionKey: 'agent:desk:a', signal: say(text), id: `a-${text}` });
  await inbox.accept({ sessionKey: 'agent:desk:\u001b[31mred', signal: say('x'), id: 'esc' });
  await inbox.accept({ sessionKey: 'agent:desk:p', signal: say('bad'), id: 'p' });
  const leases = await inbox.acquire('w1', { leaseMs: 60_000, max: 10 });
  for (const lease of leases) if (lease.key !== 'agent:desk:a') await inbox.release(lease);
  const held = await inbox.acquire('w2', { leaseMs: 60_000, max: 10 });
  for (const lease of held) if (lease.key !== 'agent:desk:p') await inbox.release(lease);
  const p = held.find((l) => l.key === 'agent:desk:p')!;
  const [dead] = await collect(inbox.read(p));
  await inbox.beginDelivery(dead!);
  await inbox.putOutcome(dead!.receiptId, poisoned('agent:desk:p'), 60_000);
  await inbox.ack(dead!);
  await inbox.release(p);
  return { dead: dead! };
}

const cli = (args: readonly string[]): Promise<CliResult> => runInProcess(args, { cwd: dir });

/** The cases every store runs: `url` names a filled inbox. */
function cases(url: () => string, extra: readonly string[] = []): void {
  it('lists the pending entries per session in seq order, with the lease holding each session', async () => {
    const { code, stdout, stderr } = await cli(['inbox', 'list', '--store', url(), ...extra]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = lines(stdout);
    expect(out[0]).toBe('4 entries pending in 2 sessions; 1 lease held');
    expect(out[1]).toMatch(/^SESSION\s+SEQ\s+KIND\s+ATTEMPTS\s+ACCEPTED\s+LEASE$/);
    const rows = out.slice(2).map((l) => l.split(/\s{2,}/));
    expect(rows.map((r) => [r[0], r[1], r[2], r[3]])).toEqual([
      ['agent:desk:\\x1b[31mred', '1', 'user_message', '0'],
      ['agent:desk:a', '1', 'user_message', '0'],
      ['agent:desk:a', '2', 'user_message', '0'],
      ['agent:desk:a', '3', 'user_message', '0'],
    ]);
    expect(rows[0]![5]).toBe('-');
    expect(rows[1]![5]).toMatch(/^w1 until \d{4}-\d\d-\d\dT/);
    expect(stdout).not.toContain('\u001b');
  });

  it('--session keeps one session; --limit caps the entries; --json prints one object per entry', async () => {
    const one = await cli(['inbox', 'list', '--store', url(), ...extra, '--session', 'agent:desk:a', '--limit', '2']);
    expect(one.code).toBe(0);
    expect(lines(one.stdout)[0]).toBe('2 entries pending for agent:desk:a in 1 session; 1 lease held');
    const json = await cli(['inbox', 'list', '--store', url(), ...extra, '--session', 'agent:desk:a', '--json']);
    const parsed = lines(json.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.map((e) => [e.seq, (e.signal as { payload: { text: string } }).payload.text])).toEqual([
      ['1', 'one'],
      ['2', 'two'],
      ['3', 'three'],
    ]);
    expect(parsed[0]).toMatchObject({ sessionKey: 'agent:desk:a', attempts: 0, lease: { workerId: 'w1' } });
    const none = await cli(['inbox', 'list', '--store', url(), ...extra, '--session', 'agent:nobody:main']);
    expect(lines(none.stdout)).toEqual(['0 entries pending for agent:nobody:main in 0 sessions; 1 lease held']);
  });

  it('lists the dead letters with their error, as a table or JSON', async () => {
    const table = await cli(['inbox', 'dead', '--store', url(), ...extra]);
    expect(table.code).toBe(0);
    const out = lines(table.stdout);
    expect(out[0]).toBe('1 dead letter');
    expect(out[2]).toMatch(/^agent:desk:p\s+1\s+\S+\s+1\s+INBOX_POISONED: delivered 6 times without being settled$/);
    const json = await cli(['inbox', 'dead', '--store', url(), ...extra, '--json']);
    const [letter] = lines(json.stdout).map((l) => JSON.parse(l) as { entry: InboxEntry; outcome: OutcomeJson });
    expect(letter?.entry).toMatchObject({ sessionKey: 'agent:desk:p', seq: '1', attempts: 1 });
    expect(letter?.outcome.error?.code).toBe('INBOX_POISONED');
  });
}

describe('signalyard inbox on SQLite', () => {
  const file = join(dir, 'inbox.db');
  const url = `sqlite:inbox.db`;
  it('fills the inbox', async () => {
    const inbox = new SqliteInbox({ path: file });
    await fill(inbox);
    await inbox.close();
  });
  cases(() => url);

  it('runs as the installed command does: a child process through the bin, exit codes as in-process', async () => {
    ensureBuiltCli();
    const list = await runBuiltCli(['inbox', 'list', '--store', url, '--session', 'agent:desk:a'], {
      cwd: dir,
      bin: true,
    });
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(lines(list.stdout)[0]).toBe('3 entries pending for agent:desk:a in 1 session; 1 lease held');
    const dead = await runBuiltCli(['inbox', 'dead', '--store', url, '--json'], { cwd: dir, bin: true });
    expect(dead.code).toBe(0);
    expect(lines(dead.stdout)).toHaveLength(1);
    const missing = await runBuiltCli(['inbox', 'dead', '--store', 'sqlite:nope.db'], { cwd: dir, bin: true });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^signalyard: error: cannot open "sqlite:nope.db": no such file\n$/);
  }, 120_000);

  it('says when nothing is pending and nothing is dead', async () => {
    const empty = new SqliteInbox({ path: join(dir, 'empty.db') });
    await empty.close();
    expect(lines((await cli(['inbox', 'list', '--store', 'sqlite:empty.db'])).stdout)).toEqual([
      '0 entries pending in 0 sessions; 0 leases held',
    ]);
    expect(lines((await cli(['inbox', 'dead', '--store', 'sqlite:empty.db'])).stdout)).toEqual(['0 dead letters']);
  });

  it('refuses a missing file, a directory, --table on SQLite, a bad --limit and a missing subcommand (exit 2)', async () => {
    const missing = await cli(['inbox', 'list', '--store', 'sqlite:nope.db']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot open "sqlite:nope.db": no such file/);
    const directory = await cli(['inbox', 'list', '--store', `sqlite:${dir}`]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toMatch(/it is not a file/);
    const table = await cli(['inbox', 'dead', '--store', url, '--table', 'x']);
    expect(table.code).toBe(2);
    expect(table.stderr).toMatch(/--table "x" applies to a postgres:\/\/ store only/);
    const limit = await cli(['inbox', 'list', '--store', url, '--limit', '0']);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toMatch(/--limit.*expected how many entries to list, an integer >= 1/);
    const bare = await cli(['inbox']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/missing subcommand: list or dead/);
    const unknown = await cli(['inbox', 'lsit', '--store', url]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/see 'signalyard inbox --help'/);
  });

  it('refuses a file that is not a database (exit 2, the store named)', async () => {
    writeFileSync(join(dir, 'text.db'), 'not a database, just text '.repeat(100));
    const result = await cli(['inbox', 'list', '--store', 'sqlite:text.db']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/"sqlite:text.db"/);
  });
});

describePostgres('signalyard inbox on PostgreSQL', () => {
  // Every object of the inbox lives in a schema of its own, dropped at the end.
  const schema = uniqueTable('cli_inbox');
  const table = `${schema}.signalyard_inbox`;
  const url = DATABASE_URL;
  it('fills the inbox', async () => {
    await adminPool().query(`CREATE SCHEMA "${schema}"`);
    const inbox = new PostgresInbox({ connectionString: url, table });
    await inbox.migrate();
    await fill(inbox);
    await inbox.close();
  });
  cases(() => url, ['--table', table]);

  it('names a table no worker migrated, and a server that does not answer (exit 2)', async () => {
    const absent = await cli(['inbox', 'list', '--store', url, '--table', `${schema}.absent`]);
    expect(absent.code).toBe(2);
    expect(absent.stderr).toMatch(/has no inbox table "sy_cli_inbox_[^"]*\.absent": no worker has migrated this inbox/);
    const down = await cli(['inbox', 'dead', '--store', 'postgres://nobody:secret@127.0.0.1:1/test']);
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/cannot reach "postgres:\/\/nobody:\*\*\*@127.0.0.1:1\/test"/);
    expect(down.stderr).not.toContain('secret');
  });

  afterAll(async () => {
    await adminPool().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await dropTablesAndEnd([]);
  });
});
